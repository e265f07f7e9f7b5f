"""InfoSpiders (Menczer & Belew 2000; Menczer et al. 2004; docs/methods.md §2): a
population of agents, each with a keyword list and a small neural net that
scores links from the keywords near them.

* Inputs of a link for agent a: for each keyword k of a, the count of k in
  the link's anchor (weight 1) and in its context window (weight ½) — the
  words nearest the link weigh most.
* The net (one tanh hidden layer, sigmoid output σ) predicts how similar the
  page behind the link will be to the query; the link's worth is
  μ = α·σ + (1 − α)·sim(q, parent page).
* Stochastic selection Pr(λ) ∝ e^{β·μ(λ)}: each link is queued with score
  β·μ + G, G a Gumbel draw — popping the highest of such scores samples the
  frontier exactly by that softmax, without replacement (the Gumbel-max
  trick), so one shared frontier serves every agent's choice.
* Energy: an agent gains sim(q, page) for each page it fetches and pays the
  mean similarity of the crawl so far (an agent doing better than average
  grows). Above 2 × the initial energy it reproduces: the offspring gets half
  the energy, a copy of the net with small random changes, its parent's
  keywords plus the page's most frequent term not among them, and the links
  of the page that made it rich (its share of the frontier). At zero energy
  an agent dies: its queued links drop below every living agent's (they are
  not lost — the crawl still takes them when nothing else is left).
* Learning: when a page arrives, the net of the agent that chose the link
  learns by back-propagation that the link led to a page of that similarity.

A topic bound to its sites (FOCUS_HOME names its home,
crawlproject.policy.scope.HomeSites): a page away from home has similarity 0 —
no energy, and the net that chose it learns 0 — and a link that leaves home
drops as a dead agent's do, below every link at home: its page is known to
be worth 0 before it is fetched, so no net predicts it (nor learns from it).
Only lowering it does not keep a crawl home: the Gumbel draws of many links
off home outdraw the few at home (on dev topics, a μ of (1 − α)·sim(parent)
for such links still left 25–80 % of the first 500 pages off home).

The population starts at FOCUS_INFOSPIDERS_AGENTS agents (the seeds dealt
out round-robin) and never exceeds FOCUS_INFOSPIDERS_MAX_AGENTS; the last
agent never dies.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from crawlproject import config
from crawlproject.config import DEFAULTS
from crawlproject.strategies.base import CrawlStrategy, RecentMemory
from crawlproject.web import meta as keys
from crawlproject.web.text import TermAnalyzer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from crawlproject.strategies.base import BuildContext, Topic
    from crawlproject.strategies.ports import FrontierPort
    from crawlproject.web.page import Page

ANCHOR_WEIGHT, CONTEXT_WEIGHT = 1.0, 0.5
INITIAL_ENERGY = 1.0
#: Links of a dead agent, and links off a site-bound topic's home, drop this
#: far: below any living agent's β·μ + G at home.
DEAD_PENALTY = 1000.0
#: Pages whose links are not scored yet: the agent each page's links go to.
_LINKS_AGENTS_KEPT = 10_000


@dataclass
class Agent:
    id: int
    keywords: list[str]
    hidden: np.ndarray  # (h, k + 1): the last column is the bias
    output: np.ndarray  # (h + 1,)
    energy: float = INITIAL_ENERGY
    alive: bool = True
    pages: int = 0
    offspring: list[int] = field(default_factory=list)

    @classmethod
    def new(cls, agent_id: int, keywords: list[str], hidden_units: int, rng: np.random.Generator) -> Agent:
        k = len(keywords)
        return cls(
            agent_id, list(keywords), rng.normal(0, 0.5, (hidden_units, k + 1)), rng.normal(0, 0.5, hidden_units + 1)
        )

    def inputs(self, anchor_terms: Counter[str], context_terms: Counter[str]) -> np.ndarray:
        return np.array(
            [ANCHOR_WEIGHT * anchor_terms.get(k, 0) + CONTEXT_WEIGHT * context_terms.get(k, 0) for k in self.keywords]
        )

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        hidden = np.tanh(self.hidden @ np.append(x, 1.0))
        return hidden, 1.0 / (1.0 + math.exp(-float(self.output @ np.append(hidden, 1.0))))

    def learn(self, x: np.ndarray, target: float, rate: float) -> float:
        """One step of back-propagation of the squared error; the error before it."""
        x1 = np.append(x, 1.0)
        hidden, out = self.forward(x)
        h1 = np.append(hidden, 1.0)
        delta_out = (out - target) * out * (1 - out)
        delta_hidden = delta_out * self.output[:-1] * (1 - hidden**2)
        self.output -= rate * delta_out * h1
        self.hidden -= rate * np.outer(delta_hidden, x1)
        return out - target

    def child(self, agent_id: int, new_keyword: str | None, rng: np.random.Generator) -> Agent:
        hidden = self.hidden + rng.normal(0, 0.05, self.hidden.shape)
        keywords = list(self.keywords)
        if new_keyword is not None:
            keywords.append(new_keyword)
            column = rng.normal(0, 0.5, (hidden.shape[0], 1))
            hidden = np.hstack([hidden[:, :-1], column, hidden[:, -1:]])  # the bias stays last
        return Agent(agent_id, keywords, hidden, self.output + rng.normal(0, 0.05, self.output.shape))


class InfoSpidersStrategy(CrawlStrategy):
    name = "infospiders"
    bound_by_home = True
    needs_judge = True  # sim(q, page): an agent's energy

    def __init__(
        self,
        topic: Topic,
        analyzer: TermAnalyzer,
        agents: int = DEFAULTS["FOCUS_INFOSPIDERS_AGENTS"],
        max_agents: int = DEFAULTS["FOCUS_INFOSPIDERS_MAX_AGENTS"],
        alpha: float = DEFAULTS["FOCUS_INFOSPIDERS_ALPHA"],
        beta: float = DEFAULTS["FOCUS_INFOSPIDERS_BETA"],
        hidden_units: int = DEFAULTS["FOCUS_INFOSPIDERS_HIDDEN"],
        learning_rate: float = DEFAULTS["FOCUS_INFOSPIDERS_LEARNING_RATE"],
        seed: int = DEFAULTS["FOCUS_RANDOM_SEED"],
        frontier: FrontierPort | None = None,
        memory: int = DEFAULTS["FOCUS_LEARN_MEMORY"],
        context_words: int = DEFAULTS["FOCUS_CONTEXT_WORDS"],
    ):
        super().__init__(topic, analyzer, frontier)
        self.query_vector = analyzer.vector(topic.query)
        self.max_agents, self.alpha, self.beta = max_agents, alpha, beta
        self.hidden_units, self.learning_rate = hidden_units, learning_rate
        self.context_words = context_words
        self.rng = np.random.default_rng(seed)
        self.noise = random.Random(seed)
        keywords = list(self.query_vector)
        self.agents = {i: Agent.new(i, keywords, hidden_units, self.rng) for i in range(agents)}
        self._next_id = agents
        self._seeds_dealt = 0
        self._similarity_sum, self._pages = 0.0, 0
        #: link key → (agent, inputs) until its page arrives, to learn from
        self._pending: RecentMemory[str, tuple[int, np.ndarray]] = RecentMemory(memory)
        #: page key → the agent its links go to, from the page's arrival until its links are scored
        self._links_agents: RecentMemory[str, int] = RecentMemory(_LINKS_AGENTS_KEPT)
        self.births = self.deaths = 0

    @classmethod
    def from_settings(cls, context: BuildContext) -> Self:
        settings = context.settings
        return cls(
            context.topic,
            TermAnalyzer(stem=config.get_bool(settings, "FOCUS_STEMMING")),
            agents=config.get_int(settings, "FOCUS_INFOSPIDERS_AGENTS"),
            max_agents=config.get_int(settings, "FOCUS_INFOSPIDERS_MAX_AGENTS"),
            alpha=config.get_float(settings, "FOCUS_INFOSPIDERS_ALPHA"),
            beta=config.get_float(settings, "FOCUS_INFOSPIDERS_BETA"),
            hidden_units=config.get_int(settings, "FOCUS_INFOSPIDERS_HIDDEN"),
            learning_rate=config.get_float(settings, "FOCUS_INFOSPIDERS_LEARNING_RATE"),
            seed=config.get_int(settings, "FOCUS_RANDOM_SEED"),
            frontier=context.frontier,
            memory=config.get_int(settings, "FOCUS_LEARN_MEMORY"),
            context_words=config.get_int(settings, "FOCUS_CONTEXT_WORDS"),
        )

    # -- the page arrives --------------------------------------------------------

    def living(self) -> list[Agent]:
        return [a for a in self.agents.values() if a.alive]

    def _agent_of(self, page: Page) -> Agent:
        agent_id = page.meta.get(keys.AGENT)
        if agent_id is None:  # a seed: dealt out round-robin
            living = self.living()
            agent = living[self._seeds_dealt % len(living)]
            self._seeds_dealt += 1
            return agent
        owner = self.agents.get(int(agent_id))
        if owner is None or not owner.alive:
            return max(self.living(), key=lambda a: a.energy)  # an orphaned link: the richest adopts it
        return owner

    @staticmethod
    def _similarity(relevance: float | None) -> float:
        """sim(q, page): the judge's verdict (the Focus makes it 0 away from home)."""
        return 0.0 if relevance is None else relevance

    def page_arrived(self, page: Page, relevance: float | None) -> None:
        """The page's arrival in the population: the net of the agent that
        chose its link learns, the agent gains and pays energy, reproduces
        or dies (every fetched page, with links or not)."""
        sim = self._similarity(relevance)
        self._learn(page, sim)
        agent = self._live(self._agent_of(page), page, sim)
        self._links_agents.keep(page.key, agent.id)
        self.frontier.set("focus/infospiders/alive", len(self.living()))

    def score_links(self, page: Page, relevance: float | None) -> Sequence[float]:
        return self.score_links_bound(page, relevance, [False] * len(page.links))

    def score_links_bound(self, page: Page, relevance: float | None, away: Sequence[bool]) -> Sequence[float]:
        """A link off home drops as a dead agent's do, and no net predicts it."""
        sim = self._similarity(relevance)
        agent = self.agents[self._links_agent(page)]
        scores = []
        for link, off_home in zip(page.links, away, strict=True):
            if off_home:  # worth 0 when it arrives: nothing to predict
                scores.append(self.beta * (1 - self.alpha) * sim + self._gumbel() - DEAD_PENALTY)
                continue
            context = page.link_context(link, self.context_words)
            x = agent.inputs(
                Counter(self.analyzer.terms(context.anchor)), Counter(self.analyzer.terms(context.context))
            )
            _, predicted = agent.forward(x)
            worth = self.alpha * predicted + (1 - self.alpha) * sim
            scores.append(self.beta * worth + self._gumbel())
            self._pending.keep(link.key, (agent.id, x), first_wins=True)
        return scores

    def child_state(self, page: Page, relevance: float | None) -> dict[str, Any]:
        return {keys.AGENT: self._links_agent(page)}

    def _links_agent(self, page: Page) -> int:
        """The agent the links of *page* go to: set when the page arrived; a
        page whose links are scored without arriving (a sitemap) goes to the
        agent that asked for it, or is dealt one as a seed is."""
        agent_id = self._links_agents.get(page.key)
        if agent_id is None:
            agent_id = self._agent_of(page).id
            self._links_agents.keep(page.key, agent_id)
        return agent_id

    def _gumbel(self) -> float:
        return -math.log(-math.log(self.noise.random() or 1e-300))

    def _learn(self, page: Page, sim: float) -> None:
        found = self._pending.pop(page.key, None)
        if found is None or self.learning_rate == 0:
            return
        agent_id, x = found
        agent = self.agents.get(agent_id)
        if agent is not None and agent.alive:
            agent.learn(x, sim, self.learning_rate)

    def _live(self, agent: Agent, page: Page, sim: float) -> Agent:
        """Energy in and out; reproduction or death. Returns the agent the
        page's links go to (the offspring, when one is born)."""
        cost = self._similarity_sum / self._pages if self._pages else 0.0
        self._similarity_sum += sim
        self._pages += 1
        agent.pages += 1
        agent.energy += sim - cost
        if agent.energy >= 2 * INITIAL_ENERGY and len(self.living()) < self.max_agents:
            offspring = agent.child(self._next_id, self._new_keyword(agent, page), self.rng)
            self._next_id += 1
            agent.energy /= 2
            offspring.energy = agent.energy
            agent.offspring.append(offspring.id)
            self.agents[offspring.id] = offspring
            self.births += 1
            self._count("born")
            return offspring
        if agent.energy <= 0 and len(self.living()) > 1:
            agent.alive = False
            self.deaths += 1
            self._count("died")
            self._bury(agent.id)
        return agent if agent.alive else max(self.living(), key=lambda a: a.energy)

    def _new_keyword(self, agent: Agent, page: Page) -> str | None:
        for term, _ in page.vector(self.analyzer).most_common():
            if term not in agent.keywords:
                return term
        return None

    def _bury(self, agent_id: int) -> None:
        def scorer(_url: str, score: float, meta: Any) -> float:
            return score - DEAD_PENALTY if meta and meta.get(keys.AGENT) == agent_id else score

        self.frontier.rescore(scorer)

    def _count(self, event: str) -> None:
        self.frontier.inc(f"focus/infospiders/{event}")
        self.frontier.max("focus/infospiders/population_max", len(self.living()))
