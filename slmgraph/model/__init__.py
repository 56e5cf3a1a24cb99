"""The language model: the llama.cpp backend, the client that records every call, the thread plan and the policy that decides which stage the model runs."""
