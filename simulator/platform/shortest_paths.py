"""The path a Floyd or Dijkstra zone chooses between two of its members, as SimGrid 3.32 does
(src/kernel/routing/FloydZone.cpp, DijkstraZone.cpp).

A zone's declared routes are the edges of a directed graph (a symmetrical route is two edges);
an edge costs the number of links it lists, and a route is a cheapest path. Among equally
cheap paths SimGrid's choice depends on its algorithm, and so do the routes here:

- Floyd: Floyd-Warshall over the members numbered in the file's order (hosts, routers, child
  zones), an intermediate member replacing a path only when strictly cheaper. Computed once,
  when the zone's first route is asked for (cubic in the zone's members, as in SimGrid).
- Dijkstra (and DijkstraCache): the graph's nodes are numbered in the order they first appear
  in the routes (source, then destination); from each source a Dijkstra with a priority queue
  of (cost, node number), holding every node from the start, costs counted in 64-bit unsigned
  integers. Computed per source, when first asked for.

SimGrid's Dijkstra has quirks that matter when a node cannot be reached: such a node leaves the
queue with cost 2^64 - 1, and its edges then wrap the cost round to a small number, which can
rewrite the predecessors of nodes that were reached. The routes here follow the same
arithmetic; a route that SimGrid then cannot finish is refused, as SimGrid refuses it ("No
route", or an endless loop). A member that appears in no route is not in Dijkstra's graph:
SimGrid crashes on any route from or to it (refused here). A model loopback edge (SimGrid's
``__loopback__`` link) is added, after the declared ones, to every member (Floyd) or node
(Dijkstra) without a declared route to itself, in zones without child zones.

Both return the zone-local route as a list of `Hop`s in travel order.
"""

from __future__ import annotations

import heapq

from joulesim.simulator.platform.network_zones import Hop, NoRoute

_ULONG_MAX = (1 << 64) - 1  # a cost not reached yet (C++ unsigned long)
_REACH_FIX = ("declare routes in {where} so that every member reaches every other (SimGrid 3.32's Dijkstra mis-routes "
              "when some cannot), or give it routing=\"Floyd\"")


class FloydRoutes:
    """Routes of a Floyd zone whose `members` are numbered in SimGrid's order."""

    def __init__(self, where: str, members: list[str], edges: dict[tuple[str, str], Hop], loopback: Hop | None):
        self.where = where
        self.index = {name: i for i, name in enumerate(members)}
        self.members = members
        import numpy as np  # (only Floyd zones need it)

        n = len(members)
        longest = max((len(hop.resources) for hop in edges.values()), default=1)
        # A stand-in for SimGrid's ULONG_MAX: above any path's cost, and twice it still fits
        # (int32 unless paths can cost that much: half the memory to sweep).
        dtype = np.int32 if n * longest < 1 << 28 else np.int64
        unreached = dtype(1 << 29) if dtype is np.int32 else dtype(1 << 60)
        cost = np.full((n, n), unreached, dtype=dtype)
        pred = np.full((n, n), -1, dtype=np.int32)
        self.hop: dict[tuple[int, int], Hop] = {}
        for (src, dst), hop in edges.items():
            i, j = self.index[src], self.index[dst]
            self.hop[(i, j)] = hop
            pred[i, j] = i
            cost[i, j] = len(hop.resources)
        if loopback is not None:
            for i in range(n):
                if (i, i) not in self.hop:
                    self.hop[(i, i)] = loopback
                    pred[i, i] = i
                    cost[i, i] = 1
        # Floyd-Warshall, one intermediate member c at a time; a path through c replaces one
        # only when strictly cheaper (an unreached cost plus anything stays above it). Row and
        # column c do not change while c is the intermediate (every edge costs a link or more).
        through = np.empty_like(cost)
        better = np.empty((n, n), dtype=bool)
        for c in range(n):
            sources = np.flatnonzero(cost[:, c] < unreached)
            if 2 * len(sources) > n:  # most members reach c: sweep the whole table in place
                np.add(cost[:, c, None], cost[c], out=through)
                np.less(through, cost, out=better)
                np.copyto(cost, through, where=better)
                np.copyto(pred, pred[c], where=better)
            elif len(sources):  # (a host that is a leaf: a few rows)
                via = cost[sources, c][:, None] + cost[c]
                rows, cols = np.nonzero(via < cost[sources])
                cost[sources[rows], cols] = via[rows, cols]
                pred[sources[rows], cols] = pred[c, cols]
        self.pred = pred

    def hops(self, src: str, dst: str) -> list[Hop]:
        s, current = self.index[src], self.index[dst]
        stack: list[Hop] = []
        while True:  # (do ... while: a member's route to itself has its loopback edge)
            previous = int(self.pred[s, current])
            if previous < 0 or len(stack) > len(self.members):
                raise NoRoute(f"{self.where} (routing Floyd) has no chain of routes from {src!r} to {dst!r} (SimGrid 3.32 "
                              f"stops: \"No route from '{src}' to '{dst}'\")", f"declare routes in {self.where} that connect them")
            stack.append(self.hop[(previous, current)])
            current = previous
            if current == s:
                break
        stack.reverse()
        return stack


class DijkstraRoutes:
    """Routes of a Dijkstra zone: `nodes` in the order they first appear in the routes, each
    node's outgoing edges (target, Hop) in the order they were declared."""

    def __init__(self, where: str, nodes: list[str], out_edges: dict[str, list[tuple[str, Hop]]]):
        self.where = where
        self.index = {name: i for i, name in enumerate(nodes)}
        self.out = [[(self.index[target], hop) for target, hop in out_edges.get(name, ())] for name in nodes]
        self._predecessors: dict[int, list[int]] = {}

    def hops(self, src: str, dst: str) -> list[Hop]:
        for name in (src, dst):
            if name not in self.index:
                raise NoRoute(f"{name!r} is in no route of {self.where} (routing Dijkstra): SimGrid 3.32 crashes on any "
                              "route from or to it (a segmentation fault)", f"declare a route from or to {name!r} in {self.where}")
        s, d = self.index[src], self.index[dst]
        if s == d:
            hop = self._edge(s, d)
            if hop is None:
                raise self._no_route(src, dst)
            return [hop]
        predecessors = self._predecessors.get(s)
        if predecessors is None:
            predecessors = self._predecessors[s] = self._dijkstra(s)
        path: list[Hop] = []
        node = d
        seen = set()
        while node != s:
            if node in seen:
                raise NoRoute(f"SimGrid 3.32 loops forever building the route from {src!r} to {dst!r} in {self.where} (routing "
                              f"Dijkstra): members that {src!r} cannot reach wrap their costs round and rewrite the way back",
                              _REACH_FIX.format(where=self.where))
            seen.add(node)
            hop = self._edge(predecessors[node], node)
            if hop is None:
                raise self._no_route(src, dst)
            path.append(hop)
            node = predecessors[node]
        path.reverse()
        return path

    def _no_route(self, src: str, dst: str) -> NoRoute:
        return NoRoute(f"{self.where} (routing Dijkstra) has no chain of routes from {src!r} to {dst!r} as SimGrid 3.32 computes "
                       f"it (it stops: \"No route from '{src}' to '{dst}'\")", _REACH_FIX.format(where=self.where))

    def _edge(self, src: int, dst: int) -> Hop | None:
        for target, hop in self.out[src]:
            if target == dst:
                return hop
        return None

    def _dijkstra(self, s: int) -> list[int]:
        n = len(self.out)
        cost = [_ULONG_MAX] * n
        cost[s] = 0
        predecessors = [0] * n
        queue = [(cost[i], i) for i in range(n)]
        heapq.heapify(queue)
        while queue:
            v = heapq.heappop(queue)[1]
            for u, hop in self.out[v]:
                # cost[v] read at each edge: a loopback edge of an unreached node changes it.
                through = (len(hop.resources) + cost[v]) & _ULONG_MAX
                if through < cost[u]:
                    predecessors[u] = v
                    cost[u] = through
                    heapq.heappush(queue, (through, u))
        return predecessors
