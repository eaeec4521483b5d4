"""examples/quickstart.ipynb, executed: every code cell in order in one namespace (a plain
cell runner: nbclient would need a Jupyter kernel, ipykernel and zmq in the venv). A cell
that raises fails the test; the last expression of each cell must evaluate."""

import ast
import json
import os

from conftest import REPO

NOTEBOOK = REPO / "examples" / "quickstart.ipynb"


def test_quickstart_notebook_runs(monkeypatch):
    notebook = json.loads(NOTEBOOK.read_text())
    monkeypatch.chdir(REPO)
    namespace = {"__name__": "__main__"}
    results = []
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(cells) >= 5
    for number, cell in enumerate(cells):
        source = "".join(cell["source"])
        tree = ast.parse(source, filename=f"{NOTEBOOK.name} cell {number}")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, f"{NOTEBOOK.name} cell {number}", "exec"), namespace)
        if last is not None:
            expression = ast.Expression(last.value)
            results.append(eval(compile(expression, f"{NOTEBOOK.name} cell {number}", "eval"), namespace))
    assert os.fspath(namespace["trace"].path).endswith("h100_bert_small_infer.json.gz")
    # The what-if table has the original and both answers; the GEMM table is not empty.
    assert len(results[-2]) == 3
    assert len(results[3]) > 0
