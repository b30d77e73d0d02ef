"""Write the clustered platforms of seed 001, chapter 5, into platforms/ (shipped with joulesim;
deterministic).

    python -m experiments.placement_network.make_cluster_platforms          # (re)write the files
    python -m experiments.placement_network.make_cluster_platforms --check  # exit 1 if one is missing or differs

Seed 001 §5.5.1: 8 clusters of 16 hosts; in each, every host is linked to the cluster's switch
(a `<cluster>`: host links `bw`/`lat`, switch = backbone `bb_bw`/`bb_lat`); the clusters are
joined by one main switch (a SHARED link on every route between two clusters). Written as
SimGrid XML that real Batsim also reads: a Full zone holding the clusters and a zoneRoute
between every two of them through the main switch. Compute hosts are named `c<k>-host<i>`, so
that cluster k's hosts are 16k..16k+15 (Batsim, and joulesim, number hosts by name as strings
compare: c0-host0, c0-host1, c0-host10, ..., c0-host15, c0-host2, ..., c0-host9, c1-host0...),
and each cluster has the zone properties cluster=c<k> (and table_5_1=c1..c6 for table 5.1's),
which deciders receive.

- griffon8x16.xml (§5.5.3, homogeneous): switch 1.25e9 B/s, latency 0; host links 1.25e6 B/s,
  24e-9 s; main switch 1.25e9 B/s, 24e-9 s. §5.5.3 gives no host speed: we use 286.087 kflop/s,
  the speed of Griffon's nodes in SimGrid's examples/platforms/griffon.xml, which §5.5.3 says
  the platform derives from (table 5.1's base speed, 286.097e3, differs by 0.003%).
- hetero_c123_o{1..4}.xml and hetero_c456_o{1..4}.xml (§5.5.4, table 5.1): base cluster b has
  switch 10 Gbit/s, latency 0, hosts at 286.097e3 flop/s, host links 10 Gbit/s, 24e-9 s; each
  c1..c6 multiplies the switch bandwidth and the host speed by its factors. The main switch is
  the homogeneous platform's (1.25e9 B/s = 10 Gbit/s, 24e-9 s): table 5.1 gives none.
  Orderings o1..o4 of §5.5.4, with c4, c5, c6 in place of c1, c2, c3 for the second set.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

NB_CLUSTERS = 8
HOSTS_PER_CLUSTER = 16
MAIN_SWITCH = ("1.25GBps", "24ns")
MASTER_LINK = ("1.25GBps", "24ns")  # joins the master's zone to each cluster (unused by jobs)

# Table 5.1: (switch bandwidth factor, host speed factor); switch latency 0, link factors 1.
TABLE_5_1 = {"c1": (2, 1.0), "c2": (4, 2.02), "c3": (1, 2.94), "c4": (1, 1.24), "c5": (2, 1.61), "c6": (1, 1.72)}
BASE_SPEED = 286.097e3  # flop/s
BASE_GBITS = 10  # Gbit/s, switch and host links
BASE_LINK_LAT = "24ns"

# §5.5.4 orderings over (c1, c2, c3) = 1, 2, 3. The text prints o2 = (c3, c3, c3, c2, c2, c2, c1,
# c1), which has three c3 and two c1, against the stated 3 x c1, 3 x c2, 2 x c3 of every
# platform; we take o1 reversed, which keeps that mix and is "by descending computing power".
ORDERINGS = {
    "o1": (1, 1, 1, 2, 2, 2, 3, 3),
    "o2": (3, 3, 2, 2, 2, 1, 1, 1),
    "o3": (1, 2, 2, 3, 3, 2, 1, 1),
    "o4": (3, 1, 2, 3, 1, 2, 1, 2),
}
SETS = {"c123": ("c1", "c2", "c3"), "c456": ("c4", "c5", "c6")}


@dataclass(frozen=True)
class ClusterSpec:
    speed: str
    link_bw: str
    link_lat: str
    switch_bw: str
    switch_lat: str
    props: tuple[tuple[str, str], ...] = ()


def render(zone_id: str, comment: str, clusters: list[ClusterSpec]) -> str:
    """One platform file: clusters c0..c<n-1>, the main switch, and a master host."""
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             "<!-- " + comment.strip().replace("\n", "\n     ") + " -->",
             '<platform version="4.1">', f'  <zone id="{zone_id}" routing="Full">']
    ids = [f"c{k}" for k in range(len(clusters))]
    for cid, c in zip(ids, clusters):
        lines += [f'    <cluster id="{cid}" prefix="{cid}-host" suffix="" radical="0-{HOSTS_PER_CLUSTER - 1}" speed="{c.speed}"',
                  f'             bw="{c.link_bw}" lat="{c.link_lat}" sharing_policy="SPLITDUPLEX"',
                  f'             bb_bw="{c.switch_bw}" bb_lat="{c.switch_lat}" bb_sharing_policy="SHARED" router_id="{cid}-router">',
                  f'      <prop id="cluster" value="{cid}"/>']
        lines += [f'      <prop id="{key}" value="{value}"/>' for key, value in c.props]
        lines.append("    </cluster>")
    # The master's zone routes like any other (SimGrid refuses routes to a routing="None" zone);
    # its host is named master_host and has no role property: Batsim makes the host of that
    # name its master and would count a role=master twice ("master,master": it aborts).
    lines += ['    <zone id="master_zone" routing="Full">',
              '      <host id="master_host" speed="1Gf"/>',
              "    </zone>",
              f'    <link id="main_switch" bandwidth="{MAIN_SWITCH[0]}" latency="{MAIN_SWITCH[1]}" sharing_policy="SHARED"/>',
              f'    <link id="master_link" bandwidth="{MASTER_LINK[0]}" latency="{MASTER_LINK[1]}" sharing_policy="SHARED"/>']
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            lines += [f'    <zoneRoute src="{a}" dst="{b}" gw_src="{a}-router" gw_dst="{b}-router">',
                      '      <link_ctn id="main_switch"/>', "    </zoneRoute>"]
    for a in ids:  # real Batsim talks to every host from the master: give it routes
        lines += [f'    <zoneRoute src="master_zone" dst="{a}" gw_src="master_host" gw_dst="{a}-router">',
                  '      <link_ctn id="master_link"/>', "    </zoneRoute>"]
    lines += ["  </zone>", "</platform>", ""]
    return "\n".join(lines)


def _flops(value: float) -> str:
    return f"{round(value, 6):.12g}f"


def griffon() -> str:
    cluster = ClusterSpec(speed="286.087kf", link_bw="1.25MBps", link_lat="24ns", switch_bw="1.25GBps", switch_lat="0s")
    comment = f"""Seed 001 §5.5.3: the homogeneous platform derived from Grid'5000's Griffon. {NB_CLUSTERS} clusters
of {HOSTS_PER_CLUSTER} hosts; host links 1.25e6 B/s, 24e-9 s; cluster switch 1.25e9 B/s, latency 0;
main switch 1.25e9 B/s, 24e-9 s; a master host. Host speed: §5.5.3 gives none; 286.087 kflop/s
is Griffon's in SimGrid's examples/platforms/griffon.xml (table 5.1's base is 286.097e3).
Generated by make_cluster_platforms.py: edit that script, not this file."""
    return render("griffon8x16", comment, [cluster] * NB_CLUSTERS)


def heterogeneous(set_name: str, ordering: str) -> str:
    kinds = [SETS[set_name][i - 1] for i in ORDERINGS[ordering]]
    clusters = []
    for kind in kinds:
        switch, speed = TABLE_5_1[kind]
        clusters.append(ClusterSpec(speed=_flops(BASE_SPEED * speed), link_bw=f"{BASE_GBITS}Gbps", link_lat=BASE_LINK_LAT,
                                    switch_bw=f"{BASE_GBITS * switch}Gbps", switch_lat="0s", props=(("table_5_1", kind),)))
    comment = f"""Seed 001 §5.5.4, table 5.1: clusters {', '.join(SETS[set_name])} in ordering {ordering} = ({', '.join(kinds)}).
Base cluster: switch 10 Gbit/s, latency 0; hosts 286.097e3 flop/s; host links 10 Gbit/s, 24e-9 s.
Factors (switch bandwidth, host speed): {', '.join(f'{k} x{TABLE_5_1[k][0]:g} x{TABLE_5_1[k][1]:g}' for k in SETS[set_name])}.
Main switch 1.25e9 B/s, 24e-9 s (§5.5.3's); a master host.
Generated by make_cluster_platforms.py: edit that script, not this file."""
    return render(f"hetero_{set_name}_{ordering}", comment, clusters)


def all_platforms() -> dict[str, str]:
    files = {"griffon8x16.xml": griffon()}
    for set_name in SETS:
        for ordering in ORDERINGS:
            files[f"hetero_{set_name}_{ordering}.xml"] = heterogeneous(set_name, ordering)
    return files


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parents[2] / "platforms"
    stale = []
    for name, text in all_platforms().items():
        path = here / name
        if "--check" in argv:
            if not path.is_file() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print("out of date: " + ", ".join(stale) + " (run python -m experiments.placement_network.make_cluster_platforms)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
