"""A topic taxonomy: a tree of ``/``-separated category paths of any depth.

Node 0 is the root (the empty path); nodes are numbered breadth-first so a
parent always comes before its children, which is the order hierarchical
probabilities are computed in.
"""

from __future__ import annotations

from collections.abc import Iterable


class TaxonomyError(ValueError):
    """A category is not in the taxonomy (or the taxonomy is unusable)."""


class Taxonomy:
    """The tree spanned by a set of category paths and all their ancestors.

    >>> tree = Taxonomy.from_categories(["course/cornell", "course/texas", "faculty"])
    >>> tree.paths
    ('', 'course', 'faculty', 'course/cornell', 'course/texas')
    >>> [tree.paths[i] for i in tree.children[tree.index("course")]]
    ['course/cornell', 'course/texas']
    >>> [tree.paths[i] for i in tree.ancestors(tree.index("course/texas"))]
    ['course/texas', 'course', '']
    """

    def __init__(self, paths: Iterable[str]):
        self.paths: tuple[str, ...] = tuple(paths)
        if not self.paths or self.paths[0] != "":
            raise TaxonomyError("a taxonomy's first node must be the root ''")
        self._index = {path: i for i, path in enumerate(self.paths)}
        self.parent: tuple[int, ...] = tuple(
            -1 if i == 0 else self._index[parent_path(path)] for i, path in enumerate(self.paths)
        )
        children: list[list[int]] = [[] for _ in self.paths]
        for node, parent in enumerate(self.parent):
            if parent >= 0:
                children[parent].append(node)
        self.children: tuple[tuple[int, ...], ...] = tuple(tuple(c) for c in children)

    @classmethod
    def from_categories(cls, categories: Iterable[str]) -> Taxonomy:
        nodes = {""}
        for category in categories:
            path = normalize(category)
            while path:
                nodes.add(path)
                path = parent_path(path)
        # Breadth-first: by depth, then alphabetically (reproducible numbering).
        return cls(sorted(nodes, key=lambda p: (depth_of(p), p)))

    def __len__(self) -> int:
        return len(self.paths)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and normalize(path) in self._index

    def index(self, path: str) -> int:
        try:
            return self._index[normalize(path)]
        except KeyError:
            raise TaxonomyError(
                f"category {path!r} is not in the taxonomy; its top categories are: "
                + ", ".join(self.paths[i] for i in self.children[0])
            ) from None

    def depth(self, node: int) -> int:
        return depth_of(self.paths[node])

    @property
    def max_depth(self) -> int:
        return max(self.depth(node) for node in range(len(self)))

    def is_leaf(self, node: int) -> bool:
        return not self.children[node]

    @property
    def leaves(self) -> list[int]:
        return [node for node in range(len(self)) if not self.children[node]]

    def ancestors(self, node: int) -> list[int]:
        """*node*, its parent, …, up to the root."""
        chain = []
        while node >= 0:
            chain.append(node)
            node = self.parent[node]
        return chain

    def at_depth(self, node: int, depth: int) -> int:
        """The ancestor of *node* at *depth* (the node itself if it is shallower)."""
        chain = self.ancestors(node)
        return chain[max(0, len(chain) - 1 - depth)]

    def to_list(self) -> list[str]:
        return list(self.paths)


def normalize(category: str) -> str:
    """A category path without surrounding spaces and slashes.

    >>> normalize(" /course/cornell/ ")
    'course/cornell'
    """
    return "/".join(part.strip() for part in category.strip().strip("/").split("/") if part.strip())


def depth_of(path: str) -> int:
    return 0 if not path else path.count("/") + 1


def parent_path(path: str) -> str:
    """The parent category's path ('' for a top category).

    >>> parent_path("course/cornell")
    'course'
    """
    return path.rpartition("/")[0]
