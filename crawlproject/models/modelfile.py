"""Model files (the focused crawler's taxonomy model, the look-ahead
models): NumPy arrays and JSON in one ``.npz`` — no pickle, so loading a
model file cannot run code."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sklearn.naive_bayes import MultinomialNB


class ModelError(ValueError):
    """A model file cannot be used (missing, not a model, wrong version)."""

#: What a fitted MultinomialNB is, besides its classes.
NB_ARRAYS = ("class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_")


def save_model(path: str | Path, format_name: str, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """Write atomically: a crawl reading the model never sees half a file
    (written under a name of this process's, then renamed over the model)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:  # a file object: NumPy adds no ".npz" to the name
            np.savez_compressed(f, meta=np.array(json.dumps({"format": format_name, **meta})), **arrays)  # type: ignore[arg-type]
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def model_format(path: str | Path) -> str | None:
    """The format a model file says it is (None: not a readable model file;
    :func:`load_model` says why)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None
    found = meta.get("format") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None


def load_model(path: str | Path, format_name: str, trainer: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Meta and arrays of a model file of *format_name*; a clear ModelError
    naming *trainer* (the command that writes one) otherwise."""
    if Path(path).is_file() and not zipfile.is_zipfile(path):
        raise ModelError(
            f"{path} is not a crawlproject model file (a model is a .npz of arrays and JSON); "
            f"train one with `{trainer}`"
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            arrays = {name: data[name] for name in data.files if name != "meta"}
    except FileNotFoundError:
        raise ModelError(f"model file {path} does not exist; train one with `{trainer}`") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        # NumPy's own advice for an unreadable file (allow_pickle) is wrong here, and unsafe: not repeated
        reason = "it holds pickled objects" if "pickle" in str(exc) else f"{type(exc).__name__}: {exc}"
        raise ModelError(f"{path} is not a crawlproject model file ({reason}); train one with `{trainer}`") from None
    if not isinstance(meta, dict) or meta.get("format") != format_name:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ModelError(f"{path} is not a {format_name} model (found {found!r}); train one with `{trainer}`")
    return meta, arrays


def nb_arrays(prefix: str, classifier: MultinomialNB) -> dict[str, np.ndarray]:
    return {f"{prefix}_{name}": getattr(classifier, name) for name in NB_ARRAYS} | {
        f"{prefix}_classes_": classifier.classes_
    }


def nb_from_arrays(prefix: str, arrays: dict[str, np.ndarray], alpha: float, fit_prior: bool = True) -> MultinomialNB:
    # imported here: scikit-learn takes a second to import, and most crawls need none of it
    from sklearn.naive_bayes import MultinomialNB

    classifier = MultinomialNB(alpha=alpha, fit_prior=fit_prior)
    for name in (*NB_ARRAYS, "classes_"):
        setattr(classifier, name, arrays[f"{prefix}_{name}"])
    classifier.n_features_in_ = classifier.feature_count_.shape[1]
    return classifier
