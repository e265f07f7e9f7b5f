"""The focused crawler's learned state, kept under ``JOBDIR`` so that a
resumed crawl — after Ctrl-C or SIGKILL — goes on with what it had learned:
the classifier after online learning, the crawled pages' features the
learner re-classifies, the distiller's graph. Arrays and JSON only (no
pickle). Each part is written when it changes as much as it is ever going to
be used: the distiller after each run, the learner when it re-scores
(amortised, see crawlproject.models.online) and when the crawl closes; a
kill loses at most what was learned since.
"""

from __future__ import annotations

import json
import logging
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from crawlproject.models.taxonomy_classifier import TaxonomyClassifier

if TYPE_CHECKING:
    from crawlproject.models.distiller import Distiller
    from crawlproject.models.online import OnlineLearner

logger = logging.getLogger(__name__)


class ChakrabartiState:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @property
    def model_path(self) -> Path:
        return self.folder / "model.npz"

    def saved_model(self) -> TaxonomyClassifier | None:
        """The classifier as online learning left it, if a crawl saved one."""
        return TaxonomyClassifier.load(self.model_path) if self.model_path.exists() else None

    # -- the learner -------------------------------------------------------------

    def save_learner(self, learner: OnlineLearner) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        _atomic(self.model_path, learner.model.save)
        rows = sp.vstack(learner.rows, format="csr") if learner.rows else sp.csr_matrix((0, 0))
        def write_rows(path: Path) -> None:
            with path.open("wb") as f:  # a file object: SciPy adds no ".npz" to the name
                sp.save_npz(f, rows, compressed=True)

        _atomic(self.folder / "learner-rows.npz", write_rows)
        counters = {"urls": learner.urls, "rounds": learner.rounds, "learned": learner.learned,
                    "reclassified": learner.reclassified}
        _atomic(self.folder / "learner.json", lambda path: path.write_text(json.dumps(counters), encoding="utf-8"))

    def load_learner(self, learner: OnlineLearner) -> bool:
        counters_file, rows_file = self.folder / "learner.json", self.folder / "learner-rows.npz"
        if not counters_file.exists() or not rows_file.exists():
            return False
        counters = json.loads(counters_file.read_text(encoding="utf-8"))
        rows = sp.load_npz(rows_file).tocsr()
        learner.urls = list(counters["urls"])
        learner.rows = [rows[i] for i in range(rows.shape[0])]
        learner.rounds, learner.learned = counters["rounds"], counters["learned"]
        learner.reclassified = counters["reclassified"]
        return True

    # -- the distiller ----------------------------------------------------------------

    def save_distiller(self, distiller: Distiller) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        state = distiller.state()
        arrays = {name: np.asarray(value) for name, value in state.items() if isinstance(value, (array, np.ndarray))}
        rest = {name: value for name, value in state.items() if name not in arrays}

        def write(path: Path) -> None:
            with path.open("wb") as f:
                np.savez(f, meta=np.array(json.dumps(rest)), **arrays)  # type: ignore[arg-type]

        _atomic(self.folder / "distiller.npz", write)

    def load_distiller(self, distiller: Distiller) -> bool:
        path = self.folder / "distiller.npz"
        if not path.exists():
            return False
        with np.load(path, allow_pickle=False) as data:
            state: dict[str, Any] = json.loads(str(data["meta"]))
            state.update({name: data[name] for name in data.files if name != "meta"})
        distiller.restore(state)
        return True


def _atomic(path: Path, write: Any) -> None:
    """Write through a temporary file renamed into place: a kill mid-write
    leaves the previous version whole."""
    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    tmp.replace(path)
