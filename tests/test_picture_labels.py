"""slmgraph picture's PNG: every label lies inside the saved figure, and each community's inside its box."""

import pytest

from slmgraph.tools.picture import write_png

mpl = pytest.importorskip("matplotlib", reason="the [picture] extra (plotly, matplotlib) is not installed")


def _comms():
    long = "Harbour master at Oban, CalMac Ferries and the Western Isles Council: timetable review of {}"
    comms = [{"id": 0, "level": 0, "parent": None, "size": 9, "title": long.format("Arran")},
             {"id": 1, "level": 0, "parent": None, "size": 80, "title": "Ferry news"},
             {"id": 2, "level": 0, "parent": None, "size": 11, "title": long.format("Skye and Raasay")}]
    comms += [{"id": 3, "level": 1, "parent": 0, "size": 7, "title": "Supercalifragilisticexpialidocious-Brodick"},
              {"id": 4, "level": 1, "parent": 0, "size": 2, "title": "Lamlash"},
              {"id": 5, "level": 1, "parent": 1, "size": 80, "title": long.format("Mull")},
              {"id": 6, "level": 1, "parent": 2, "size": 11, "title": long.format("Portree")}]
    return comms


def test_png_labels_lie_inside_the_figure_and_their_boxes(tmp_path, monkeypatch):
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle
    from matplotlib.text import Text

    saved = []
    real = Figure.savefig

    def savefig(self, *a, **k):
        real(self, *a, **k)
        saved.append(self)

    monkeypatch.setattr(Figure, "savefig", savefig)
    title = "island-ferry-corpus-with-a-very-long-folder-name-" * 3
    out = write_png(_comms(), tmp_path / "p.png", title)
    assert out.stat().st_size > 0
    fig = saved[0]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    r = FigureCanvasAgg(fig).get_renderer()  # the saved figure was closed: draw it on an Agg canvas again
    fig.draw(r)
    frame = fig.bbox
    texts = [t for t in fig.findobj(Text) if t.get_text().strip() and t.get_visible()]
    assert any("island-ferry" in t.get_text() for t in texts)
    for t in texts:
        bb = t.get_window_extent(r)
        assert frame.x0 <= bb.x0 and bb.x1 <= frame.x1 and frame.y0 <= bb.y0 and bb.y1 <= frame.y1, t.get_text()
    ax = fig.axes[0]
    boxes = [p.get_window_extent(r) for p in ax.patches if isinstance(p, Rectangle)]
    labels = [t for t in ax.texts if t.get_text().strip()]
    assert len(labels) >= 5
    for t in labels:
        bb = t.get_window_extent(r)
        home = [b for b in boxes if b.x0 <= (bb.x0 + bb.x1) / 2 <= b.x1 and b.y0 <= (bb.y0 + bb.y1) / 2 <= b.y1]
        assert home and any(b.x0 <= bb.x0 and bb.x1 <= b.x1 for b in home), t.get_text()
    shown = " ".join(t.get_text() for t in labels)
    assert "Harbour master at Oban" in shown and "Ferry news" in shown and "(80)" in shown
