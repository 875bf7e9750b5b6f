"""The approach table agrees with the binary's policies, tiers and pairs (-o ac_list), and a pair
the table does not name runs under its own name, made from the binary's listing."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from acbench import approaches, components
from acbench.spec import SpecError, load_spec


def test_table_agrees_with_the_binary() -> None:
    data = components.listing()
    assert approaches.check_table(data) == []
    # every pair of the binary is run by some approach (the table's, or one made from it)
    names = approaches.accepted_names()
    for n in components.pair_names(data):
        assert approaches.lookup(n) is not None, n
    assert names[:len(approaches.APPROACHES)] == list(approaches.APPROACHES)


def test_a_contradiction_is_named() -> None:
    data = copy.deepcopy(components.listing())
    next(p for p in data["policies"] if p["name"] == "vma")["network"] = True
    assert approaches.check_table(data) == [
        "vma: in_process_only = True but the binary's vma over blocks (spill) says False",
        "vma-tuples: in_process_only = True but the binary's vma over tuples (spill) says False"]


def _with_fifo() -> dict:
    """The listing as it is once a FIFO policy is registered (spilling tiers, blocks default)."""
    data = copy.deepcopy(components.listing())
    data["policies"].append({"name": "fifo", "summary": "first in, first out", "default_tier": "blocks",
                             "tier_shapes": ["spill"], "tier_needs": [], "network": True, "fetch_on_read": True,
                             "tiers": ["blocks", "tuples"], "options": []})
    data["pairs"] += [{"policy": "fifo", "tier": "blocks", "shape": "spill", "default": True},
                      {"policy": "fifo", "tier": "tuples", "shape": "spill", "default": False}]
    return data


def test_a_new_policy_runs_without_a_table_entry() -> None:
    data = _with_fifo()
    a = approaches.from_binary("fifo", data)
    assert a is not None and (a.policy, a.options, a.spills, a.pages, a.in_process_only) == \
        ("fifo", {}, True, False, False)
    b = approaches.from_binary("fifo+tuples", data)
    assert b is not None and b.options == {"ac_tier": "tuples"} and b.resident == "items"
    assert approaches.from_binary("fifo+blocks", data) is None      # the default pair is spelt "fifo"
    assert approaches.from_binary("fifo+swap", data) is None and approaches.from_binary("lifo", data) is None
    # a paging pair: pages, swaps (anonymous memory), R = its resident pages, memcached's walkers off
    swap = approaches.from_binary("none+swap", data)
    assert swap is not None and (swap.pages, swap.swap, swap.spills, swap.resident) == (True, True, False, "pages")
    assert swap.flags == approaches.PAGING_FLAGS
    file = approaches.from_binary("none+mmapfile", data)
    assert file is not None and (file.pages, file.swap) == (True, False)


def test_spec_accepts_a_pair_of_the_binary(tmp_path: Path) -> None:
    workloads = Path(__file__).resolve().parents[2] / "experiments" / "workloads"
    (tmp_path / "readonly").write_text((workloads / "readonly").read_text())
    spec = tmp_path / "s.toml"
    spec.write_text('[fixed]\nrecordcount = 4000\n[grid]\napproach = ["lru+tuples", "alru"]\nworkload = ["readonly"]\n'
                    'zipf_theta = [0.9]\nmem_ratio = [0.5]\n')
    cells = load_spec(spec).cells()
    assert [c.cell_id for c in cells] == ["lru_tuples_readonly_z0.9_m0.5_r0", "alru_readonly_z0.9_m0.5_r0"]
    spec.write_text(spec.read_text().replace('"lru+tuples"', '"lru+swap"'))
    with pytest.raises(SpecError, match=r"unknown approach 'lru\+swap'; accepted: memcached, .* \(or POLICY\+TIER, "
                                        r"a pair of memcached-ac -o ac_list, or NAME\{option=value,...\}\)"):
        load_spec(spec)
