"""Islands: k searches as one on Dask workers, exchanging elites at epoch boundaries; the same
formula for the same seed and k, every promise of a one-search fit kept, and a search that
goes on when a worker dies (a scheduler and two workers as separate processes, one killed)."""

import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

from budgets import TINY_MODEL
from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.scoring.scorer import Candidate
from cadsr_sklearn.search import checkpoint, islands
from cadsr_sklearn.search.islands import elites_of, island_seeds, island_settings, welcome
from cadsr_sklearn.settings import SearchSettings

distributed = pytest.importorskip("dask.distributed")

#: Two islands of a tiny search, exchanging every 3 epochs.
ISLANDS = dict(TINY_MODEL, n_islands=2, migration_every=3)


def _data(n=200, seed=0):
    """x0*x1 + x0 with 5 % noise: the linear leaves write the law in the first epoch, and
    only noise keeps a fit running to its budget (no formula is exact)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(1, 3, (n, 2))
    y = X[:, 0] * X[:, 1] + X[:, 0]
    return X, y + 0.05 * y.std() * rng.normal(size=n)


@pytest.fixture(scope="module", autouse=True)
def no_local_cluster_left():
    """The local cluster a fit keeps for the next is closed with the module, not at exit
    (where its logging would write to streams pytest has closed)."""
    yield
    islands.close_local_clusters()


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes, shared by the module's fits."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as local:
        yield local


# ----------------------------------------------------------------- the parts

def test_island_seeds_are_the_searchs_own_for_island_0_and_distinct_for_the_others():
    assert island_seeds(11, 22, 0) == (11, 22)
    seeds = {island_seeds(11, 22, i) for i in range(8)}
    assert len(seeds) == 8
    assert island_seeds(11, 22, 3) == island_seeds(11, 22, 3)


def test_each_island_gets_its_share_of_max_evaluations_and_of_the_threads():
    settings = SearchSettings.from_params(
        CADSRRegressor(max_evaluations=1001, n_jobs=4).get_params())
    assert island_settings(settings, 2, 0).training.max_evaluations == 501
    assert island_settings(settings, 2, 1).n_jobs == 2
    assert island_settings(settings, 8, 0).n_jobs == 1
    unbounded = SearchSettings.from_params(CADSRRegressor(n_jobs=3).get_params())
    assert island_settings(unbounded, 4, 3).training == unbounded.training


def test_each_island_runs_with_its_entry_of_island_params_and_the_budgets_of_all():
    params = CADSRRegressor(n_islands=3, max_evaluations=900, alpha=2.0, island_params=[
        {}, {"genetic_generations": 5, "alpha": 5.0}]).get_params()
    settings = SearchSettings.from_params(params)
    assert settings.training.genetic_generations == 0  # the head's: the estimator's values
    own = [island_settings(settings, 3, i).training for i in range(3)]
    assert [t.genetic_generations for t in own] == [0, 5, 0]  # entry i % 2
    assert [t.alpha for t in own] == [2.0, 5.0, 2.0]
    assert {t.max_evaluations for t in own} == {300}
    # one search is island 0: it runs with the first entry
    one = SearchSettings.from_params(params | {"n_islands": 1, "island_params": [
        {"linear_terms": 2}, {"genetic_generations": 5}]})
    assert (one.training.linear_terms, one.training.genetic_generations) == (2, 0)


@pytest.mark.parametrize("island_params, message", [
    ([], "at least one mapping"),
    ([{}, "genetic"], r"island_params\[1\] must be a dict"),
    ([{"max_time": 5}], "'max_time', which an island cannot set"),
    ([{"n_islands": 2}], "'n_islands', which an island cannot set"),
    ([{"genetic_generations": -1}], "'genetic_generations' parameter of island_params"),
    ("genetic", "'island_params' parameter"),
])
def test_island_params_that_an_island_cannot_take_are_refused_before_the_fit(
        island_params, message):
    X, y = _data(20)
    with pytest.raises(ValueError, match=message):
        CADSRRegressor(n_islands=2, island_params=island_params).fit(X, y)


class _Expression:
    def __init__(self, key, complexity=3):
        self.key, self.complexity, self.n_fitted = key, complexity, 0


def _candidate(key, reward, complexity=3):
    return Candidate(_Expression(key, complexity), reward=reward, loss=-reward)


class _Island:
    """What welcome() touches of a search: its loop state and config."""

    def __init__(self, replay, n_top):
        from cadsr_sklearn.scoring.scorer import HallOfFame

        self.state = type("State", (), dict(replay=replay, hall_of_fame=HallOfFame(),
                                            best=max(replay, key=lambda c: c.criterion)))()
        self.config = type("Config", (), dict(n_top=n_top))()


def test_migrants_replace_the_weaker_half_of_the_replay_buffer_and_raise_tau_star():
    own = [_candidate(f"own{i}", -i) for i in range(4)]  # rewards 0, -1, -2, -3
    island = _Island(list(own), n_top=4)
    welcome(island, [_candidate("m1", 5, complexity=4), _candidate("m2", -0.5),
                     _candidate("m3", -0.7), _candidate("own0", 0)], 0.5)
    keys = [c.expression.key for c in island.state.replay]
    assert keys == ["m1", "own0", "m2", "own1"]  # the weaker half, own2 and own3, lose
    assert island.state.best.expression.key == "m1"
    assert island.state.hall_of_fame.by_complexity[4].expression.key == "m1"
    # migrants better than all its own take the weaker half, never the stronger
    island = _Island(list(own), n_top=4)
    welcome(island, [_candidate(f"m{i}", 10 - i) for i in range(4)], 0.5)
    assert [c.expression.key for c in island.state.replay] == ["m0", "m1", "own0", "own1"]


def test_elites_are_the_best_distinct_formulas_of_every_island_in_island_order_on_ties():
    report = lambda elites: islands.RoundReport([], elites, [], None, 0, 0, "")  # noqa: E731
    reports = {1: report([_candidate("a", 1.0), _candidate("b", 0.5)]),
               0: report([_candidate("c", 1.0), _candidate("a", 1.0),
                          _candidate("d", -np.inf)])}
    assert [c.expression.key for c in elites_of(reports, 3)] == ["c", "a", "b"]


# ----------------------------------------------------------------- fits

def test_the_same_seed_and_islands_give_the_same_formula_and_a_history_per_island(cluster):
    X, y = _data()
    fits = [CADSRRegressor(n_epochs=6, scheduler=cluster.scheduler_address, **ISLANDS).fit(X, y)
            for _ in range(2)]
    assert str(fits[0].expression_) == str(fits[1].expression_)
    history = fits[0].history_
    assert [(r["island"], r["epoch"]) for r in history] == (
        [(0, e) for e in range(3)] + [(1, e) for e in range(3)]
        + [(0, e) for e in range(3, 6)] + [(1, e) for e in range(3, 6)])
    assert fits[0].n_epochs_ == 6  # each island's, as n_epochs counts them
    assert fits[0].n_evaluations_ == history[-1]["evaluations"] + history[-4]["evaluations"]
    assert fits[0].stop_reason_ == "n_epochs"
    one = CADSRRegressor(n_epochs=6, **TINY_MODEL).fit(X, y)
    assert "island" not in one.history_[0]


def test_islands_exchange_their_best(cluster):
    X, y = _data()
    model = CADSRRegressor(n_epochs=6, scheduler=cluster.scheduler_address, **ISLANDS)
    model.set_params(warm_start=True, keep_candidates=True).fit(X, y)
    assert len(model.candidates_) > 2 * 48  # every island's, not the head's (it scores none)
    saved = checkpoint.loads(model.search_state_, model.device_)
    first, second = saved.search.archipelago.islands
    # after the exchange each island's replay holds formulas only the other one wrote
    assert {c.expression.key for c in first.state.replay} & {
        c.expression.key for c in second.state.replay}
    assert saved.search.state.best.criterion == max(
        first.state.best.criterion, second.state.best.criterion)


def test_with_no_migrant_share_each_island_searches_alone(cluster):
    X, y = _data()
    fits = {share: CADSRRegressor(n_epochs=4, scheduler=cluster.scheduler_address,
                                  migrant_share=share, **dict(ISLANDS, migration_every=2)
                                  ).fit(X, y) for share in (0, 0.5)}
    one = CADSRRegressor(n_epochs=4, **TINY_MODEL).fit(X, y)

    def column(model, name, island):
        return [r[name] for r in model.history_ if r["island"] == island]

    # island 0 is seeded as one search is: with nothing welcomed, it is that search
    for name in ("best_reward", "batch_mean_reward", "n_unique"):
        assert column(fits[0], name, 0) == [r[name] for r in one.history_]
    # island 1 holds island 0's best after the first exchange only where migrants travel
    shared, alone = column(fits[0.5], "best_reward", 1), column(fits[0], "best_reward", 1)
    assert shared[2] == column(fits[0.5], "best_reward", 0)[1] > alone[2]


def test_migrants_take_at_most_their_share_of_the_replay_buffer():
    own = [_candidate(f"own{i}", -i) for i in range(4)]
    migrants = [_candidate(f"m{i}", 10 - i, complexity=5) for i in range(4)]
    island = _Island(list(own), n_top=4)
    welcome(island, migrants, 0.25)
    assert [c.expression.key for c in island.state.replay] == ["m0", "own0", "own1", "own2"]
    # a buffer not yet full has room, which the share still bounds
    island = _Island(own[:1], n_top=4)
    welcome(island, migrants, 0.25)
    assert [c.expression.key for c in island.state.replay] == ["m0", "own0"]
    # no share, or one too small for a place: nothing is welcomed, τ* and the front included
    for share in (0, 0.2):
        island = _Island(own[:1], n_top=4)
        welcome(island, migrants, share)
        assert [c.expression.key for c in island.state.replay] == ["own0"]
        assert island.state.best.expression.key == "own0"
        assert not island.state.hall_of_fame.by_complexity


def test_a_portfolio_runs_each_island_with_its_own_loop(cluster):
    X, y = _data()
    model = CADSRRegressor(n_epochs=3, scheduler=cluster.scheduler_address, island_params=[
        {}, {"genetic_generations": 1, "genetic_population": 20}], **ISLANDS).fit(X, y)
    proposed = {(r["island"], r["proposed_genetic"] > 0) for r in model.history_}
    assert proposed == {(0, False), (1, True)}  # only island 1 ran the genetic stage
    assert np.isfinite(model.score(X, y))


def test_max_evaluations_and_max_time_bound_all_the_islands(cluster):
    X, y = _data()
    model = CADSRRegressor(n_epochs=1000, max_evaluations=500,
                           scheduler=cluster.scheduler_address, **ISLANDS).fit(X, y)
    assert model.stop_reason_ == "max_evaluations"
    assert model.n_evaluations_ < 500 + 2 * 3 * 48  # a round of each island at most beyond
    # noise: no exact fit can end the search before its budget (x0*x1 + x0 can, on a
    # machine fast or busy enough to reach it within the 4 s)
    y = y + 0.1 * np.random.default_rng(1).normal(size=len(y))
    start = time.perf_counter()
    model = CADSRRegressor(n_epochs=100_000, max_time=4, tol=0,
                           scheduler=cluster.scheduler_address, **ISLANDS).fit(X, y)
    assert model.stop_reason_ == "max_time"
    assert time.perf_counter() - start < 4 + 15  # the budget, the refinement and the rest


def test_warm_start_and_checkpoints_keep_every_island(cluster, tmp_path):
    X, y = _data()
    path = tmp_path / "search.ckpt"
    model = CADSRRegressor(n_epochs=3, warm_start=True, checkpoint=path,
                           scheduler=cluster.scheduler_address, **ISLANDS).fit(X, y)
    saved = checkpoint.read(path, model.device_).search
    assert [len(island.state.history) for island in saved.archipelago.islands] == [3, 3]
    model.set_params(checkpoint=None).fit(X, y)  # continues both islands
    assert model.n_epochs_ == 6
    assert [r["epoch"] for r in model.history_ if r["island"] == 1] == list(range(6))
    resumed = CADSRRegressor(n_epochs=5, checkpoint=path, scheduler=cluster.scheduler_address,
                             **ISLANDS).fit(X, y)  # the file's call goes on to 5 epochs
    assert [r["epoch"] for r in resumed.history_ if r["island"] == 0] == list(range(5))
    with pytest.raises(ValueError, match="n_islands"):
        model.set_params(n_islands=3).fit(X, y)


def test_a_resumed_search_goes_on_as_the_uninterrupted_one_with_the_elites_on_their_way(
        cluster, tmp_path):
    X, y = _data()
    common = dict(ISLANDS, scheduler=cluster.scheduler_address)
    whole = CADSRRegressor(n_epochs=6, **common).fit(X, y)
    path = tmp_path / "search.ckpt"
    CADSRRegressor(n_epochs=3, checkpoint=path, **common).fit(X, y)
    resumed = CADSRRegressor(n_epochs=6, checkpoint=path, **common).fit(X, y)

    def rewards(model):
        return [(r["island"], r["epoch"], r["batch_mean_reward"]) for r in model.history_]

    assert rewards(resumed) == rewards(whole)


def test_every_island_scores_on_the_heads_rows_so_that_their_rewards_compare(cluster):
    X, y = _data(600)
    model = CADSRRegressor(n_epochs=1, row_batch=200, const_fit_samples=50, warm_start=True,
                           scheduler=cluster.scheduler_address, **ISLANDS).fit(X, y)
    head = checkpoint.loads(model.search_state_, model.device_).search
    for island in head.archipelago.islands:
        np.testing.assert_array_equal(island.scorer.table_rows, head.scorer.table_rows)
        np.testing.assert_array_equal(island.scorer.fitter.rows_, head.scorer.fitter.rows_)


def test_a_large_table_goes_to_the_workers_without_a_word_from_dask(cluster):
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 3, (30_000, 20))  # 4.8 MB, some 16 MB with the copies a search holds
    y = X[:, 0] * X[:, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = CADSRRegressor(n_epochs=1, scheduler=cluster.scheduler_address,
                               **ISLANDS).fit(X, y)
    assert {r["island"] for r in model.history_} == {0, 1}


def test_a_warm_start_takes_new_migration_settings_and_new_data_to_every_island(cluster):
    X, y = _data()
    model = CADSRRegressor(n_epochs=3, warm_start=True, scheduler=cluster.scheduler_address,
                           **ISLANDS).fit(X, y)
    model.set_params(n_epochs=4, migration_every=2).fit(X, y)  # 4 more epochs each
    assert [(r["island"], r["epoch"]) for r in model.history_[6:]] == [
        (0, 3), (0, 4), (1, 3), (1, 4), (0, 5), (0, 6), (1, 5), (1, 6)]
    model.set_params(migrant_share=0).fit(X, y)
    saved = checkpoint.loads(model.search_state_, model.device_).search
    assert saved.archipelago.migrant_share == 0 and not saved.archipelago.migrants
    model.set_params(migrant_share=0.5).fit(X, 3 * y)  # new data: every island scores on it
    saved = checkpoint.loads(model.search_state_, model.device_).search
    assert saved.archipelago.migrants  # the elites on their way to the next round
    assert [island.y_variance for island in saved.archipelago.islands] == [
        pytest.approx(np.var(3 * y))] * 2
    assert model.score(X, 3 * y) > 0.9


def test_units_and_guesses_reach_every_island(cluster):
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 3, (200, 2))
    y = X[:, 0] * X[:, 1] ** 2
    model = CADSRRegressor(n_epochs=3, guesses=["x0*x1*x1"], dimensional_reduction=False,
                           scheduler=cluster.scheduler_address, **ISLANDS)
    model.fit(X, y, X_units=["kg", "m/s"], y_units="kg*m^2/s^2")
    assert model.stop_reason_ == "tol"  # the guess is exact: the first round ends the search
    assert str(model.sympy()) == "x0*x1**2"


def test_ctrl_c_stops_every_island_after_its_epoch_and_keeps_the_best_so_far(cluster):
    X, y = _data()

    def interrupt_in_the_middle_of_the_first_round():
        with distributed.Client(cluster.scheduler_address) as client:
            while not any(key.startswith("cadsr-round") for keys in
                          client.processing().values() for key in keys):
                time.sleep(0.05)
        time.sleep(1.0)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    threading.Thread(target=interrupt_in_the_middle_of_the_first_round, daemon=True).start()
    # one round of 10 000 epochs: nothing but the interrupted round can give a formula
    model = CADSRRegressor(n_epochs=100_000, tol=0, scheduler=cluster.scheduler_address,
                           **{**ISLANDS, "migration_every": 10_000}).fit(X, y)
    assert model.interrupted_ and model.stop_reason_ == "interrupted"
    assert {r["island"] for r in model.history_} == {0, 1}
    assert 0 < model.n_epochs_ < 10_000
    assert model.expression_ is not None and model.score(X, y) > 0


def test_a_local_cluster_of_one_process_per_island_by_default():
    X, y = _data()
    model = CADSRRegressor(n_epochs=3, **ISLANDS).fit(X, y)
    assert {r["island"] for r in model.history_} == {0, 1}


def test_without_dask_or_a_scheduler_the_error_says_what_to_do(monkeypatch):
    X, y = _data()
    monkeypatch.setattr(islands, "_CONNECT_TIMEOUT", 1)
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler"):
        CADSRRegressor(n_epochs=3, scheduler="tcp://127.0.0.1:9", **ISLANDS).fit(X, y)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'cadsr-sklearn\[distributed\]'"):
        CADSRRegressor(n_epochs=3, **ISLANDS).fit(X, y)
    with pytest.raises(ValueError, match="n_islands"):
        CADSRRegressor(n_islands=0).fit(X, y)


# ------------------------------------------- a scheduler and two workers as processes

def _start(argv, tmp_path, name):
    log = open(tmp_path / f"{name}.log", "w")
    return subprocess.Popen([sys.executable, "-m", *argv], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def _after_the_first_round(checkpoint, act) -> None:
    """``act()`` in a thread once the fit checkpointed at ``checkpoint`` wrote its front (the
    head joined the islands' first round)."""
    front = checkpoint.with_name(checkpoint.name + ".front.csv")

    def wait_then_act():
        while not front.exists():
            time.sleep(0.05)
        act()

    threading.Thread(target=wait_then_act, daemon=True).start()


def test_one_search_across_processes_goes_on_when_a_worker_is_killed_and_ends_well_without_its_scheduler(  # noqa: E501
        tmp_path):
    scheduler_file = tmp_path / "scheduler.json"
    processes = [_start(["distributed.cli.dask_scheduler", "--scheduler-file",
                         str(scheduler_file), "--port", "0", "--no-dashboard"],
                        tmp_path, "scheduler")]
    try:
        while not scheduler_file.exists():
            time.sleep(0.1)
        workers = [_start(["distributed.cli.dask_worker", "--scheduler-file",
                           str(scheduler_file), "--nthreads", "1", "--no-nanny",
                           "--no-dashboard"], tmp_path, f"worker{i}") for i in range(2)]
        processes += workers
        with distributed.Client(scheduler_file=str(scheduler_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
            address = client.scheduler.address
        _after_the_first_round(tmp_path / "search.ckpt",
                               lambda: os.kill(workers[1].pid, signal.SIGKILL))
        X, y = _data()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = CADSRRegressor(n_epochs=30, tol=0, scheduler=address, warm_start=True,
                                   checkpoint=tmp_path / "search.ckpt", **ISLANDS).fit(X, y)
        lost = [str(w.message) for w in caught if "was lost" in str(w.message)]
        assert len(lost) == 1 and "its worker died" in lost[0]
        epochs = {i: max(r["epoch"] for r in model.history_ if r["island"] == i)
                  for i in (0, 1)}
        assert sorted(epochs.values())[0] < 29 and sorted(epochs.values())[1] == 29
        assert model.stop_reason_ == "n_epochs" and not model.interrupted_
        assert model.score(X, y) > 0
        # a warm start brings the lost island back, on the worker left, counting on
        model.set_params(n_epochs=2, checkpoint=None).fit(X, y)
        assert [(r["island"], r["epoch"]) for r in model.history_[-4:]] == [
            (0, epochs[0] + 1), (0, epochs[0] + 2), (1, epochs[1] + 1), (1, epochs[1] + 2)]

        # the scheduler killed in the middle of a search: every island is lost, the fit
        # returns what the head holds
        _after_the_first_round(tmp_path / "again.ckpt",
                               lambda: os.killpg(processes[0].pid, signal.SIGKILL))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = CADSRRegressor(n_epochs=100_000, tol=0, scheduler=address,
                                   checkpoint=tmp_path / "again.ckpt",
                                   **ISLANDS).fit(X, y)
        lost = [str(w.message) for w in caught if "was lost" in str(w.message)]
        assert lost and all("the scheduler cannot be reached" in m for m in lost)
        assert model.stop_reason_ == "islands_lost" and model.score(X, y) > 0
    finally:
        for process in reversed(processes):  # the workers, then the scheduler
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def test_several_outputs_and_the_command_line_run_islands(cluster, tmp_path, capsys):
    from cadsr_sklearn.cli import main

    X, y = _data()
    Y = np.column_stack([y, X[:, 0] - X[:, 1]])
    model = CADSRRegressor(n_epochs=3, scheduler=cluster.scheduler_address, **ISLANDS).fit(X, Y)
    assert all({r["island"] for r in output.history_} == {0, 1}
               for output in model.estimators_)
    table = tmp_path / "data.csv"
    np.savetxt(table, np.column_stack([X, y]), delimiter=",", header="a,b,y", comments="")
    assert main(["fit", str(table), "--target", "y", "--islands", "2", "--scheduler",
                 cluster.scheduler_address, "--n-epochs", "3", "--batch-size", "48",
                 "--param", "ff_dim=32", "--out", str(tmp_path / "model.json")]) == 0
    assert "3 epochs on each of 2 islands" in capsys.readouterr().out
