"""Page judges: how relevant a fetched page is (the first of the three
scoring ports; docs/architecture.md, "Three ports").

Every crawl has one judge, whatever its strategy (the link scorer: it reads
the judge's verdicts and never judges pages itself). ``FOCUS_JUDGE`` chooses
it, as ``FOCUS_STRATEGY`` chooses the strategy: a name of :data:`JUDGES` —
``query`` (log-TF × IDF, the IDF the language's corrected by the crawl's own
pages), ``query-tf`` (docs/methods.md §2's TF cosine, as the literature ran
it; with ``FOCUS_IDF_INDEX``, TF-IDF with a search index's IDF) — or the
import path of any :class:`~crawlproject.judges.base.PageJudge`, built by its
``from_settings``; or ``auto``: the judge of the model the strategy was built
with (a context graph, a link-value model, a taxonomy classifier, the
oracles' labels, Fish-Search's any-term rule), else a model file's own judge
when the topic names a model (a taxonomy classifier with good categories, or
a topic learnt from examples), else ``query-tf``: what every quality
benchmark so far measured. With ``FOCUS_JUDGE_LABELS`` the judge is wrapped
by one the user's labels teach (crawlproject.judges.learning).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawlproject import config
from crawlproject.config import SettingsError
from crawlproject.corpus.labels import parse_categories

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy.settings import BaseSettings

    from crawlproject.judges.base import PageJudge
    from crawlproject.models.taxonomy_classifier import TaxonomyClassifier
    from crawlproject.web.text import TermAnalyzer

#: Judge names (as ``FOCUS_JUDGE`` says them) → classes; ``auto`` chooses (module doc).
JUDGES = {
    "query": "crawlproject.judges.query.QueryJudge",
    "query-tf": "crawlproject.judges.query.TfQueryJudge",
}


def judge_class(name: str) -> type[PageJudge] | None:
    """The judge class a ``FOCUS_JUDGE`` value names (None for ``auto``); one
    line when it names none.

    >>> judge_class("query-tf").__name__
    'TfQueryJudge'
    >>> judge_class("querytf")
    Traceback (most recent call last):
    ...
    crawlproject.config.SettingsError: FOCUS_JUDGE='querytf' names no judge: did you mean 'query-tf'? Give auto, a judge name (query, query-tf) or the import path of a PageJudge class
    """  # noqa: E501 (a doctest's output line)
    from crawlproject.judges.base import PageJudge

    if name.strip().lower() in ("", "auto"):
        return None
    found: type[PageJudge] = config.named_class("FOCUS_JUDGE", name, JUDGES, PageJudge, "judge", extra="auto")
    return found


def model_good(model: TaxonomyClassifier) -> tuple[str, ...]:
    """The good category a model trained from examples names for itself."""
    good = model.report.get("good") if isinstance(model.report, dict) else None
    return (good,) if isinstance(good, str) and good else ()


def model_judge(path: str, good: Sequence[str], what: str) -> PageJudge:
    """The judge of a model file: a topic from examples, or a taxonomy
    classifier with good categories (from *good*, or the model's own)."""
    from crawlproject.judges.classifier import ClassifierJudge, ExamplesJudge
    from crawlproject.models import topic_page
    from crawlproject.models.modelfile import ModelError, model_format
    from crawlproject.models.taxonomy import TaxonomyError
    from crawlproject.models.taxonomy_classifier import TaxonomyClassifier

    try:
        if model_format(path) == topic_page.FORMAT:
            return ExamplesJudge(topic_page.TopicPageModel.load(path))
        model = TaxonomyClassifier.load(path)
        chosen = tuple(good) or model_good(model)
        if not chosen:
            raise SettingsError(f"{what} with a taxonomy model needs good categories: -a good=CATEGORY[,CATEGORY…]")
        return ClassifierJudge(model, parse_categories(",".join(chosen), model.taxonomy.paths))
    except ModelError as exc:
        raise SettingsError(str(exc)) from None
    except TaxonomyError as exc:
        raise SettingsError(f"good categories {', '.join(good)}: {exc}") from None


def judge_from_settings(
    settings: BaseSettings, query: str, model: str, good: Sequence[str], analyzer: TermAnalyzer, what: str,
    own: PageJudge | None = None, required: bool = True,
) -> PageJudge | None:
    """The judge a crawl's settings and topic ask for (see the module doc):
    *own* is the strategy's model's judge (None: it has none); *what* names
    the strategy in errors. Without a topic, a strategy that does not need
    verdicts (not *required*: breadth-first, random) has no judge (None)."""
    from crawlproject.judges.base import JudgeContext
    from crawlproject.judges.learning import LabelTaughtJudge
    from crawlproject.judges.query import TfQueryJudge

    kind = judge_class(config.get_str(settings, "FOCUS_JUDGE"))
    path = model or config.get_str(settings, "FOCUS_MODEL")
    judge: PageJudge
    if kind is None and own is not None:
        judge = own
    elif kind is None and path:
        judge = model_judge(path, good or parse_categories(config.get_str(settings, "FOCUS_GOOD")), what)
    else:
        chosen = kind or TfQueryJudge
        terms = analyzer.vector(query)
        if chosen.reads_query and not terms:
            if not required:
                return None
            raise SettingsError(
                f"{what} needs a topic: a query with at least one non-stopword term (-a query=\"…\")"
                + (", or a model (-a model=FILE)" if kind is None else f" (FOCUS_JUDGE={chosen.name})")
                + f"; got query={query!r}"
            )
        judge = chosen.from_settings(JudgeContext(settings, terms, analyzer))
    if config.get_bool(settings, "FOCUS_JUDGE_LABELS"):
        judge = LabelTaughtJudge(judge, analyzer)
    return judge
