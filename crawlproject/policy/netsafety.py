"""Safe by default: a crawl steered by the pages it reads never reaches a
private network, and fetches only http(s) URLs without credentials.

Any page can link to ``http://169.254.169.254/latest/meta-data`` or to the
crawler's own admin port. So, unless ``FOCUS_ALLOWED_NETWORKS`` opens a
range for an intranet crawl, a request is refused — and counted — when its
host is, or resolves to, an address that is not globally routable:
loopback, private (RFC 1918, IPv6 ULA), link-local, shared, multicast,
reserved, unspecified; IPv4-mapped IPv6 addresses are judged as the IPv4
address they carry. A literal address is recognised in every spelling a
resolver accepts (``127.1``, ``2130706433``, ``0x7f000001``, ``[::1]``);
``localhost`` names are loopback (RFC 6761).

Three places enforce it: URL admission (crawlproject.policy.admission: seeds,
and links in the canonicalize spider middleware), the network-safety
downloader middleware (crawlproject.middlewares.netsafety: every request
about to be downloaded, redirects and robots.txt fetches included) and
:class:`SafeResolver`
(Scrapy's ``TWISTED_DNS_RESOLVER``: a name whose address is refused fails
like a DNS error, so no connection is ever opened to it).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
from typing import TYPE_CHECKING, Any

from scrapy.resolver import CachingThreadedResolver
from twisted.internet.error import DNSLookupError

from crawlproject import config
from crawlproject.config import SettingsError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Self

    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def literal_address(host: str) -> Address | None:
    """The address *host* names literally, in any spelling, or ``None`` for a name.

    >>> str(literal_address("127.1")), str(literal_address("0x7f000001")), str(literal_address("[::1]"))
    ('127.0.0.1', '127.0.0.1', '::1')
    >>> literal_address("www.example.com") is None
    True
    """
    host = host.strip().strip("[]").split("%", 1)[0]  # no brackets, no IPv6 zone
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if not host or not host.replace(".", "").replace("x", "").replace("X", "").isalnum():
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))  # 127.1, 2130706433, 0177.0.0.1
    except OSError:
        return None


#: The kinds of address a crawl does not reach unless FOCUS_ALLOWED_NETWORKS opens them.
_ADDRESS_KINDS = ("loopback", "link_local", "multicast", "unspecified", "reserved", "private")
#: Every refusal word of the network policy (stats ``focus/url_refused/<word>``).
NETWORK_PROBLEMS = frozenset({*_ADDRESS_KINDS, "not_global"})


def address_problem(address: Address, allowed: Iterable[Network] = ()) -> str | None:
    """Why *address* must not be reached (a stats-key word), or ``None``.

    >>> address_problem(ipaddress.ip_address("10.1.2.3")), address_problem(ipaddress.ip_address("8.8.8.8"))
    ('private', None)
    >>> address_problem(ipaddress.ip_address("::ffff:169.254.169.254"))
    'link_local'
    """
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in allowed):
        return None
    for problem in _ADDRESS_KINDS:
        if getattr(address, f"is_{problem}"):
            return problem
    if not address.is_global:
        return "not_global"
    return None


class NetworkPolicy:
    """What may be reached: FOCUS_ALLOWED_NETWORKS opens ranges."""

    #: Hosts judged, remembered: every link of every page asks, and most
    #: hosts are names that ``ipaddress`` rejects by raising (slow).
    HOSTS_REMEMBERED = 10_000

    def __init__(self, allowed: Iterable[Network] = ()):
        self.allowed = tuple(allowed)
        self._judged: dict[str, str | None] = {}

    @classmethod
    def from_settings(cls, settings: Any) -> NetworkPolicy:
        value = config.get_str(settings, "FOCUS_ALLOWED_NETWORKS")
        networks = []
        for part in (p.strip() for p in value.split(",")):
            if not part:
                continue
            try:
                networks.append(ipaddress.ip_network(part, strict=False))
            except ValueError:
                raise SettingsError(
                    f"FOCUS_ALLOWED_NETWORKS: {part!r} is not a network; give CIDR ranges, "
                    "e.g. 10.0.0.0/8,192.168.1.0/24"
                ) from None
        return cls(networks)

    def host_problem(self, host: str) -> str | None:
        """Why a URL's host must not be reached (judged without DNS), or ``None``.

        >>> policy = NetworkPolicy()
        >>> policy.HOSTS_REMEMBERED = 2  # the memory is bounded: a full one starts again
        >>> [policy.host_problem(h) for h in ("10.0.0.1", "www.example.com", "10.0.0.1", "LOCALHOST", "127.1")]
        ['private', None, 'private', 'loopback', 'loopback']
        >>> sorted(policy._judged)  # the first two forgotten when the third came
        ['127.1', 'LOCALHOST']
        """
        try:
            return self._judged[host]
        except KeyError:
            pass
        if len(self._judged) >= self.HOSTS_REMEMBERED:
            self._judged.clear()
        problem = self._judged[host] = self._host_problem(host)
        return problem

    def _host_problem(self, host: str) -> str | None:
        host = host.lower().rstrip(".")
        if host == "localhost" or host.endswith(".localhost"):
            return "loopback" if not self.allowed_loopback else None
        address = literal_address(host)
        return address_problem(address, self.allowed) if address is not None else None

    @property
    def allowed_loopback(self) -> bool:
        return address_problem(ipaddress.ip_address("127.0.0.1"), self.allowed) is None


class PrivateAddressError(DNSLookupError):
    """A name resolved to an address the crawl must not reach."""


class SafeResolver(CachingThreadedResolver):
    """Scrapy's caching resolver, refusing names that resolve to addresses
    the policy refuses (``TWISTED_DNS_RESOLVER``). Literal addresses pass:
    the URL was judged already, or it is the operator's own proxy."""

    policy = NetworkPolicy()

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._refused_names: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> Self:
        resolver = super().from_crawler(crawler, reactor)
        with contextlib.suppress(SettingsError):  # said in one line when the crawl starts (the spider checks)
            resolver.policy = NetworkPolicy.from_settings(crawler.settings)
        return resolver

    def getHostByName(self, name: str, timeout: Any = ()) -> Deferred[str]:  # noqa: N802 (Twisted's name)
        resolution = super().getHostByName(name, timeout)
        if literal_address(name) is not None:
            return resolution

        def check(address: str) -> str:
            problem = address_problem(ipaddress.ip_address(address), self.policy.allowed)
            if problem is not None:
                # Twisted reports only "no results" to the download: say why here, once per name.
                if name not in self._refused_names:
                    self._refused_names.add(name)
                    logger.warning(
                        "%(name)s resolves to %(address)s (%(problem)s): refused; FOCUS_ALLOWED_NETWORKS "
                        "opens network ranges for an intranet crawl",
                        {"name": name, "address": address, "problem": problem},
                    )
                raise PrivateAddressError(f"{name} resolves to {address} ({problem}): refused")
            return address

        resolution.addCallback(check)
        return resolution
