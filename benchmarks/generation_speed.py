"""Prompt and generation speed of a GGUF model on this machine, as slmgraph runs it.

Measures, for one model and thread count:

* prompt evaluation, tokens/s (a ~600-token text unit after a cached fixed prefix);
* greedy generation without a grammar, tokens/s;
* grammar-constrained generation of one extraction record (the schema
  slmgraph uses), two ways: slmgraph's sampler (arg-max checked first, whole
  vocabulary filtered only when the grammar rejects it) and llama-cpp-python's
  ``create_completion`` (whole vocabulary filtered every token); both must
  produce the same text.

Usage::

    python benchmarks/generation_speed.py [--model PATH.gguf] [--threads N] [--repeats 3]

Prints a table and writes ``benchmarks/results/generation_speed.md`` (and
``.json``). Run it on an idle machine: other processes on the cores distort it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from slmgraph.config.settings import Settings, physical_cores
from slmgraph.indexing.stages.extract_schema import extraction_schema
from slmgraph.indexing.stages.ingest_chunk import make_text_units
from slmgraph.indexing.stages.ingest_read import Document
from slmgraph.model.backend import load_model
from slmgraph.model.client import ModelClient
from slmgraph.names.forms import candidate_names
from slmgraph.config.prompting import Prompts
from slmgraph.samples import DULCE

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)



def main() -> None:
    """Parse the arguments, measure, print the table and write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=physical_cores())
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import llama_cpp

    s = Settings(descriptions="text")
    model = load_model(args.model, 8192, args.threads, 42)
    client = ModelClient(model, None, "bench")
    prompts = Prompts()
    units, _ = make_text_units(Document("d", "dulce.txt", DULCE.read_text(encoding="utf-8")), model.tokenize,
                               model.detokenize, 600, 100)
    system = prompts.fill("extract_system", entity_types=", ".join(s.entity_types),
                          example=prompts.text("extract_example_text").strip())
    rows: dict[str, list[float]] = {"prompt_tok_s": [], "gen_tok_s": [], "grammar_fast_tok_s": [],
                                    "grammar_llamacpp_tok_s": []}
    same = True
    for rep in range(args.repeats):
        u = units[1 + rep % (len(units) - 1)]
        # prompt evaluation: fixed part cached, the text unit evaluated
        client.call("warm", system, "warm-up", schema=None, max_tokens=1)
        t0 = time.perf_counter()
        g = client.call("prompt", system, u.text, schema=None, max_tokens=1)
        dt = time.perf_counter() - t0
        rows["prompt_tok_s"].append((g.prompt_tokens - g.cached_tokens) / dt)
        # free generation: time only tokens after the first
        g = client.call("gen", "You write stories.", "Write a long story about a lighthouse keeper.", schema=None,
                        max_tokens=256)
        rows["gen_tok_s"].append(g.completion_tokens / g.seconds)
        # grammar-constrained extraction record
        cands = candidate_names(u.text, s.max_candidates)
        schema = extraction_schema(cands, s, with_descriptions=False)
        user = prompts.fill("extract_user", candidates="; ".join(cands), text=u.text)
        fixed, rest = model.prompt_tokens(model.render(system, user))
        model.complete(fixed, rest[:1], schema=None, max_tokens=1)  # cache the fixed part
        g = model.complete(fixed, rest, schema=schema, max_tokens=400, max_loop_breaks=0)
        prompt_s = (len(rest)) / statistics.mean(rows["prompt_tok_s"])
        rows["grammar_fast_tok_s"].append(g.completion_tokens / max(1e-9, g.seconds - prompt_s))
        grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        model.complete(fixed, rest[:1], schema=None, max_tokens=1)
        t0 = time.perf_counter()
        res = model.llm.create_completion(prompt=fixed + rest, max_tokens=g.completion_tokens, temperature=0.0,
                                          repeat_penalty=1.0, grammar=grammar)
        dt = time.perf_counter() - t0
        n = res["usage"]["completion_tokens"]
        rows["grammar_llamacpp_tok_s"].append(n / max(1e-9, dt - prompt_s))
        same = same and res["choices"][0]["text"] == g.text[: len(res["choices"][0]["text"])]

    result = {
        "model": model.name, "n_params": model.n_params, "n_vocab": model._n_vocab, "threads": args.threads,
        "machine": benchkit.machine(), "repeats": args.repeats,
        **{k: round(statistics.median(v), 1) for k, v in rows.items()},
        "grammar_outputs_identical": same,
    }
    result["grammar_speedup"] = round(result["grammar_fast_tok_s"] / result["grammar_llamacpp_tok_s"], 2)
    lines = [
        f"# Generation speed: {result['model']} ({result['n_params'] / 1e6:.0f}M params, vocab {result['n_vocab']}),"
        f" {result['threads']} threads, {result['machine']}",
        "",
        "| measure | tokens/s (median of %d) |" % args.repeats,
        "|---|---|",
        f"| prompt evaluation (text unit after a cached prefix) | {result['prompt_tok_s']} |",
        f"| generation, no grammar | {result['gen_tok_s']} |",
        f"| generation, extraction grammar, slmgraph sampler | {result['grammar_fast_tok_s']} |",
        f"| generation, extraction grammar, llama-cpp-python create_completion | {result['grammar_llamacpp_tok_s']} |",
        "",
        f"slmgraph sampler vs llama-cpp-python under the grammar: x{result['grammar_speedup']}; "
        f"identical output: {same}.",
    ]
    print("\n".join(lines))
    benchkit.write_results("generation_speed", lines, result)


if __name__ == "__main__":
    main()
