"""The longest modules first, when pytest-xdist spreads a suite over workers
(make check: -n with --dist loadfile, a module whole in one worker, in its
own order). xdist hands the modules out in the order they were collected;
a long one handed out last runs alone at the end while the other workers
wait. Started first, the shorter modules fill the other workers around it.

A conftest.py calls sort(config, items, [names]) from its
pytest_collection_modifyitems; without -n nothing changes (a serial run
keeps pytest's order). The names come from `pytest --durations=0` summed by
file; a stale list costs time, never a test."""


def sort(config, items, longest_first):
    if not getattr(config.option, "numprocesses", None):
        return
    rank = {name: i for i, name in enumerate(longest_first)}
    # stable: the tests of a module keep their order
    items.sort(key=lambda item: rank.get(item.module.__name__, len(rank)))
