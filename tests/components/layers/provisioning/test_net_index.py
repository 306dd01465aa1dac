"""Finding a host address's network (components/layers/provisioning/config.py `_NetIndex`): by bisection when the
networks are disjoint, and always the network a scan of them in order finds first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from components.layers.provisioning.config import _Net, _NetIndex

networks = st.lists(
    st.tuples(st.integers(0, 60), st.integers(0, 5)).map(lambda pair: _Net(pair[0], pair[0] + pair[1], None, str(pair))),
    max_size=16,
)


@given(networks, st.integers(-1, 70))
def test_the_network_found_is_the_first_that_holds_the_address(nets: list[_Net], ip: int) -> None:
    assert _NetIndex(nets).find(ip) == next((n for n in nets if n.first <= ip <= n.last), None)


def test_many_disjoint_networks_are_searched_by_bisection() -> None:
    nets = [_Net(100 * i, 100 * i + 49, None, f"net{i}") for i in range(50)]
    index = _NetIndex(list(reversed(nets)))
    assert index._ordered is not None  # disjoint: bisection
    assert [index.find(ip) for ip in (0, 49, 50, 4900, 4999)] == [nets[0], nets[0], None, nets[49], None]
