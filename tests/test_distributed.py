"""Multi-worker programs (#27): a TF1 Estimator trained by every worker of a cluster with a
collective strategy (`train_distribute=MultiWorkerMirroredStrategy()`, the cluster in
TF_CONFIG), migrated and run as worker processes on loopback ports. Every wait is bounded;
nothing leaves the machine."""
import contextlib
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import tfm_cli

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

# the cluster programs, TF1 as written (benchmarks/ray_train.py runs them on Ray Train too)
CLUSTER = pathlib.Path(__file__).parent / "cluster"

PROGRAM = (CLUSTER / "estimator_multiworker.py").read_text()


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    root = tmp_path_factory.mktemp("multi_worker")
    (root / "trainer.py").write_text(PROGRAM)
    done = tfm_cli.run("upgrade", root / "trainer.py", "--outtree", root / "out", "--no-cache", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    source = root / "out" / "trainer.py"
    assert "shims.estimator.Estimator" in source.read_text()
    return source


def _env(cluster=None, task=("worker", 0)):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    for key in ("TF_USE_LEGACY_KERAS", "TF_CONFIG", "TF2_BEHAVIOR"):  # (TF 1.15 reads TF2_BEHAVIOR)
        env.pop(key, None)
    if cluster:
        env["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                       "task": {"type": task[0], "index": task[1]}})
    return env


def _start(source, model_dir, steps, cluster=None, task=("worker", 0)):
    return subprocess.Popen([sys.executable, str(source), str(model_dir), str(steps)],
                            env=_env(cluster, task), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _finish(proc, timeout=300):
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"a worker did not finish in {timeout} s:\n{out[-3000:]}")
    return proc.returncode, out


def _losses(out):
    return [float(v) for v in re.findall(r"loss = ([-0-9.e]+), step", out)]


def _kernel(out):
    line = [l for l in out.splitlines() if l.startswith("KERNEL ")]
    assert line, out[-3000:]
    return np.array([float(v) for v in line[-1].split()[1:]])


def test_two_workers_train_the_model_one_worker_trains_with_the_global_batch(migrated, tmp_path):
    """Two workers on loopback ports, each reading its half of every global batch
    (input_context), give the single worker's run with the whole batch: the same logged
    losses and final variables (MultiWorkerMirroredStrategy averaging the gradients as
    TF 1.15's collective strategy did); only the chief writes checkpoints, and the
    cluster's evaluator task evaluates them up to the last, as the local run evaluated its
    last checkpoint."""
    cluster = {"worker": ["localhost:%d" % _free_port(), "localhost:%d" % _free_port()],
               "evaluator": ["localhost:%d" % _free_port()]}
    workers = [_start(migrated, tmp_path / ("chief" if i == 0 else "other"), 30, cluster, ("worker", i))
               for i in range(2)]
    evaluator = _start(migrated, tmp_path / "chief", 30, cluster, ("evaluator", 0))
    single = _start(migrated, tmp_path / "single", 30)
    results = [_finish(p) for p in workers + [single, evaluator]]
    for code, out in results:
        assert code == 0, out[-3000:]
    (_, chief), (_, other), (_, alone), (_, evaluated) = results
    final = [l for l in evaluated.splitlines() if l.startswith("EVALUATION ")]
    assert final and "global_step=30" in final[-1], evaluated[-3000:]
    assert final[-1] == [l for l in alone.splitlines() if l.startswith("EVALUATION ")][-1]
    assert "EVALUATION" not in chief + other
    assert "num_workers = 2" in chief
    assert "PIPELINE 0 OF 2" in chief and "PIPELINE 1 OF 2" in other and "PIPELINE" not in alone
    assert len(_losses(alone)) == 6 and np.allclose(_losses(chief), _losses(alone), rtol=1e-5, atol=1e-6)
    assert np.allclose(_kernel(chief), _kernel(alone), rtol=1e-5, atol=1e-6)
    assert "model.ckpt-30.index" in os.listdir(tmp_path / "chief")
    assert "NO CHECKPOINT" in other and np.allclose(_losses(other), _losses(chief))


def _latest_step(model_dir):
    steps = [int(m.group(1)) for f in os.listdir(model_dir) if (m := re.match(r"model\.ckpt-(\d+)\.index$", f))] \
        if os.path.isdir(model_dir) else []
    return max(steps, default=-1)


def _kill_at(model_dir, step, chief, other) -> float:
    """Kills ``other`` once the chief has written a checkpoint at ``step`` (waiting at most
    240 s); returns when."""
    deadline = time.time() + 240
    while _latest_step(model_dir) < step:
        assert time.time() < deadline and chief.poll() is None, f"the job did not reach step {step}"
        time.sleep(0.3)
    other.send_signal(signal.SIGKILL)
    return time.time()


def test_a_killed_worker_stops_the_others_with_a_clear_error_and_training_resumes(migrated, tmp_path):
    """Killing one worker mid-run: the chief stops within seconds with one error naming the
    lost worker and the checkpoint to resume from (never a hang), and a new start resumes
    from that checkpoint's step."""
    cluster = ["localhost:%d" % _free_port(), "localhost:%d" % _free_port()]
    model_dir = tmp_path / "model"
    chief = _start(migrated, model_dir, 10 ** 7, {"worker": cluster}, ("worker", 0))
    other = _start(migrated, tmp_path / "other", 10 ** 7, {"worker": cluster}, ("worker", 1))
    try:
        killed = _kill_at(model_dir, 20, chief, other)
        code, out = _finish(chief, timeout=180)
        waited = time.time() - killed
    finally:
        for proc in (chief, other):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert code != 0 and waited < 180
    error = [l for l in out.splitlines() if l.startswith("RuntimeError: shims.estimator: a worker")]
    assert error, out[-3000:]
    resume = _latest_step(model_dir)
    assert resume >= 20 and f"model.ckpt-{resume} (step {resume})" in error[0], error[0]
    code, out = _finish(_start(migrated, model_dir, resume + 5))  # one process, no cluster
    assert code == 0, out[-3000:]
    # train_distribute is set (one replica here): the step logged is read before the update,
    # as TF 1.15 logged it
    logged = [int(step) for step in re.findall(r"loss = [-0-9.e]+, step = (\d+)", out)]
    assert logged and logged[0] == resume, out[-3000:]
    assert _latest_step(model_dir) == resume + 5


# --- a synchronous between-graph program (SyncReplicasOptimizer) on MultiWorkerMirroredStrategy ---

SYNC_PROGRAM = (CLUSTER / "sync_replicas.py").read_text()


@pytest.fixture(scope="module")
def sync_program(tmp_path_factory):
    """The synchronous program and its migration (a second upgrade changes nothing)."""
    root = tmp_path_factory.mktemp("sync_replicas")
    (root / "sync_replicas.py").write_text(SYNC_PROGRAM)
    quiet = {"TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONWARNINGS": "ignore", "TF_CONFIG": None, "TF2_BEHAVIOR": None}
    done = tfm_cli.run("upgrade", root / "sync_replicas.py", "--outtree", root / "out", "--no-cache",
                       "--format", "json", env=quiet, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "its cluster's workers run it on tf.distribute.MultiWorkerMirroredStrategy" in done.stdout
    source = root / "out" / "sync_replicas.py"
    again = tfm_cli.run("upgrade", source, "--no-diff", "--no-cache", env=quiet, timeout=300)
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    return root / "sync_replicas.py", source


def _task(python, source, flags, env, log):
    """One task on loopback ports, its output in files (a full pipe would block it)."""
    with open(str(log) + ".out", "w") as out, open(str(log) + ".err", "w") as err:
        return subprocess.Popen([str(python), str(source), *flags], env=env, stdout=out, stderr=err)


def _job(python, source, tmp_path, name, workers, tf_config=False, extra=()):
    """A job of the program: with TF 1.x's flags a parameter server and ``workers`` workers,
    or from ``TF_CONFIG`` alone workers only (as Kubeflow's TFJob and Ray Train set it), each
    with its own checkpoint directory. Returns each worker's (status, stdout, stderr) and
    the parameter server's, once every worker has ended (bounded)."""
    hosts = ["localhost:%d" % _free_port() for _ in range(workers)]
    ps_host = "localhost:%d" % _free_port()
    logs = tmp_path / name
    logs.mkdir()
    tasks, ps = [], None
    for i in range(workers):
        flags = ["--train_dir=%s" % (logs / ("dir%d" % i)), *extra]
        env = _env({"worker": hosts}, ("worker", i)) if tf_config else _env()
        if not tf_config:
            flags += ["--ps_hosts=" + ps_host, "--worker_hosts=" + ",".join(hosts), "--job_name=worker",
                      "--task_index=%d" % i]
        tasks.append(_task(python, source, flags, env, logs / ("worker%d" % i)))
    if not tf_config:
        ps = _task(python, source, ["--ps_hosts=" + ps_host, "--worker_hosts=" + ",".join(hosts),
                                    "--job_name=ps"], _env(), logs / "ps")
    try:
        for task in tasks:
            task.wait(timeout=240)  # a hang fails here, not in CI's limit
    finally:
        for task in tasks + [ps] * bool(ps):
            if task.poll() is None:
                task.kill()
            task.wait()
    read = lambda stem: tuple((logs / (stem + ext)).read_text() for ext in (".out", ".err"))
    done = [(task.returncode, *read("worker%d" % i)) for i, task in enumerate(tasks)]
    return done, (ps.returncode, *read("ps")) if ps else None, logs


def _sync_losses(out):
    line = [l for l in out.splitlines() if l.startswith("LOSSES ")]
    assert line, out[-3000:]
    return np.array([float(v) for v in line[0].split()[1:]])


def _checkpoint(directory):
    """Every variable of the latest checkpoint in ``directory``, by name."""
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(directory))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def test_a_synchronous_cluster_program_runs_on_multi_worker_mirrored_strategy(sync_program, tmp_path, tf1_python):
    """#27: a SyncReplicasOptimizer program (parameter server, replica_device_setter, the
    optimizer's hook, a monitored session on server.target) is converted: its workers run
    it on MultiWorkerMirroredStrategy. One worker equals TF 1.15's run on a parameter server
    and one worker (the same losses, every variable of the last checkpoint); two workers,
    each on half of every global batch, started from TF_CONFIG alone, equal it too: their
    losses average to the single worker's, the chief's checkpoint is TF 1.15's, and the
    other worker writes none. Started the TF 1.15 way (flags, a parameter server), the
    parameter server ends at once, saying it has no work."""
    original, migrated = sync_program
    text = migrated.read_text()
    assert "server = shims.cluster.MultiWorker(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)" in text
    assert ".on_workers(server)" in text and "shims.cluster.SyncReplicasOptimizer(opt," in text
    code = text.split('"""', 2)[2]  # past the docstring, which still tells the TF1 story
    for gone in ("make_session_run_hook", "replica_device_setter", "master=", "tf.device"):
        assert gone not in code, gone
    (tf1,), _, tf1_logs = _job(tf1_python, original, tmp_path, "tf1", 1)
    assert tf1[0] == 0, tf1[2][-3000:]
    want, want_vars = _sync_losses(tf1[1]), _checkpoint(tf1_logs / "dir0")
    assert len(want) == 12 and int(want_vars["global_step"]) == 12
    (one,), ps, one_logs = _job(sys.executable, migrated, tmp_path, "one", 1)
    assert one[0] == 0, one[2][-3000:]
    assert ps[0] == 0 and "/job:ps/task:0 has no work" in ps[2], ps[2][-2000:]
    np.testing.assert_allclose(_sync_losses(one[1]), want, rtol=1e-5, atol=1e-6)
    got = _checkpoint(one_logs / "dir0")
    assert sorted(got) == sorted(want_vars)
    for name in want_vars:
        np.testing.assert_allclose(got[name], want_vars[name], rtol=1e-5, atol=1e-6, err_msg=name)
    (chief, other), _, two_logs = _job(sys.executable, migrated, tmp_path, "two", 2, tf_config=True)
    assert chief[0] == 0 and other[0] == 0, (chief[2] + other[2])[-3000:]
    np.testing.assert_allclose((_sync_losses(chief[1]) + _sync_losses(other[1])) / 2, want, rtol=1e-5, atol=1e-6)
    got = _checkpoint(two_logs / "dir0")
    for name in want_vars:
        np.testing.assert_allclose(got[name], want_vars[name], rtol=1e-5, atol=1e-6, err_msg=name)
    assert not (two_logs / "dir1").exists() or not any((two_logs / "dir1").glob("model.ckpt-*"))


@contextlib.contextmanager
def _reaped(tasks):
    """Every task is ended on the way out (killed if it still runs)."""
    try:
        yield tasks
    finally:
        for task in tasks:
            if task.poll() is None:
                task.kill()
            task.wait()


def _sync_workers(migrated, tmp_path, model_dir):
    """The chief (checkpoints in ``model_dir``) and another worker of the synchronous
    program, from TF_CONFIG, training until they are stopped."""
    hosts = ["localhost:%d" % _free_port() for _ in range(2)]
    flags = ["--last_step=100000", "--pause=0.02"]
    return [_task(sys.executable, migrated, ["--train_dir=%s" % d, *flags], _env({"worker": hosts}, ("worker", i)),
                  tmp_path / ("worker%d" % i)) for i, d in enumerate((model_dir, tmp_path / "other"))]


def test_a_killed_worker_of_a_synchronous_program_stops_the_chief_and_the_job_resumes(sync_program, tmp_path):
    """Killing one worker mid-run stops the other within seconds with one error naming the
    checkpoint to resume from (never a hang); the restarted job resumes there on every
    worker, the one whose own checkpoint directory is empty too (it takes the chief's
    variables, as TF1's workers read the ones the chief restored)."""
    _, migrated = sync_program
    model_dir = tmp_path / "chief"
    tasks = _sync_workers(migrated, tmp_path, model_dir)
    chief, other = tasks
    try:
        killed = _kill_at(model_dir, 10, chief, other)
        chief.wait(timeout=180)
        waited = time.time() - killed
    finally:
        for task in tasks:
            if task.poll() is None:
                task.kill()
            task.wait()
    err = (tmp_path / "worker0.err").read_text()
    assert chief.returncode != 0 and waited < 180
    error = [l for l in err.splitlines() if l.startswith("RuntimeError: shims.MonitoredTrainingSession: a worker")]
    assert error, err[-3000:]
    resume = _latest_step(model_dir)
    assert resume >= 10 and f"model.ckpt-{resume} (step {resume})" in error[0], error[0]
    hosts = ["localhost:%d" % _free_port() for _ in range(2)]
    tasks = [_task(sys.executable, migrated, ["--train_dir=%s" % d, "--last_step=%d" % (resume + 4)],
                   _env({"worker": hosts}, ("worker", i)), tmp_path / ("again%d" % i))
             for i, d in enumerate((model_dir, tmp_path / "empty"))]
    with _reaped(tasks):
        for task in tasks:
            task.wait(timeout=240)
    for i, task in enumerate(tasks):
        out = (tmp_path / ("again%d.out" % i)).read_text()
        assert task.returncode == 0, (tmp_path / ("again%d.err" % i)).read_text()[-3000:]
        assert out.split()[:2] == ["START", str(resume)] and len(_sync_losses(out)) == 4, out
    assert _latest_step(model_dir) == resume + 4


def test_a_killed_chief_of_a_synchronous_program_is_said_as_it_is(sync_program, tmp_path):
    """#54: killing the chief stopped the other worker with "no checkpoint was written ...
    a new start begins from the beginning" (its own folder had none; the chief's had
    model.ckpt-10, and the restart resumed there). A worker that writes no checkpoints
    says so, and that the chief's latest is where the job resumes."""
    _, migrated = sync_program
    model_dir = tmp_path / "chief"
    with _reaped(_sync_workers(migrated, tmp_path, model_dir)) as (chief, other):
        _kill_at(model_dir, 10, chief, chief)
        other.wait(timeout=180)
    err = (tmp_path / "worker1.err").read_text()
    error = [l for l in err.splitlines() if l.startswith("RuntimeError: shims.MonitoredTrainingSession: a worker")]
    assert other.returncode != 0 and error, err[-3000:]
    assert "no checkpoint was written" not in error[0] and "from the beginning" not in error[0], error[0]
    assert "this worker writes no checkpoints" in error[0] and "the chief's latest checkpoint" in error[0]
    assert _latest_step(model_dir) >= 10


@pytest.fixture(scope="module")
def parameter_servers(tmp_path_factory):
    """The Estimator of a parameter-server cluster (no train_distribute), as written and migrated."""
    root = tmp_path_factory.mktemp("parameter_servers")
    (root / "trainer.py").write_text((CLUSTER / "estimator_parameter_servers.py").read_text())
    done = tfm_cli.run("upgrade", root / "trainer.py", "--outtree", root / "out", "--no-cache", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "trainer.py", root / "out" / "trainer.py"


def _ps_job(python, source, model_dir, steps, workers=0, evaluator=False):
    """A parameter server, a chief, ``workers`` workers (and an evaluator) from TF_CONFIG on
    loopback ports: {task: (exit status, output)}; every task other than the parameter
    server must end by itself, in bounded time."""
    cluster = {"chief": ["localhost:%d" % _free_port()], "ps": ["localhost:%d" % _free_port()]}
    if workers:
        cluster["worker"] = ["localhost:%d" % _free_port() for _ in range(workers)]
    kinds = [("ps", 0), *(("worker", i) for i in range(workers)), *([("evaluator", 0)] if evaluator else []),
             ("chief", 0)]
    logs = {kind: pathlib.Path("%s.%s%d" % (model_dir, *kind)) for kind in kinds}
    tasks = {kind: _task(python, source, [str(model_dir), str(steps)], _env(cluster, kind), logs[kind])
             for kind in kinds}
    results = {}
    try:
        for kind in [k for k in kinds if k[0] != "ps"][::-1]:  # the chief first
            try:
                code = tasks[kind].wait(timeout=240)
            except subprocess.TimeoutExpired:
                code = "did not end"
            results[kind] = (code, pathlib.Path(str(logs[kind]) + ".out").read_text()
                             + pathlib.Path(str(logs[kind]) + ".err").read_text())
    finally:
        for task in tasks.values():
            task.kill()
            task.wait()
    return results


def test_an_estimator_with_parameter_servers_computes_what_tf_1_15_computed(parameter_servers, tmp_path,
                                                                              tf1_python):
    """#27: TF 1.15's Estimator in a TF_CONFIG cluster with a parameter server and no
    train_distribute trained by between-graph replication. Migrated, it runs on
    ParameterServerStrategy: the chief schedules its steps on the cluster (worker 0 in a
    child process), the variables on the parameter server. With a chief alone (one worker,
    as TF1 counted them) it logs TF 1.15's losses and ends with its variables, in the
    checkpoint at the last step."""
    legacy, migrated = parameter_servers
    want = _ps_job(tf1_python, legacy, tmp_path / "tf1", 40)[("chief", 0)]
    got = _ps_job(sys.executable, migrated, tmp_path / "tf2", 40)[("chief", 0)]
    assert want[0] == 0 and got[0] == 0, (want[1][-2000:], got[1][-3000:])
    assert len(_losses(want[1])) == 8 and np.allclose(_losses(got[1]), _losses(want[1]), rtol=1e-5, atol=1e-6)
    assert np.allclose(_kernel(got[1]), _kernel(want[1]), rtol=1e-5, atol=1e-6)
    assert "STEP 40" in got[1] and "model.ckpt-40.index" in os.listdir(tmp_path / "tf2")


def test_an_estimator_with_parameter_servers_trains_on_its_workers_and_the_evaluator_follows(
        parameter_servers, tmp_path):
    """#27: the migrated Estimator with a parameter server, a chief, two workers and an
    evaluator (TF 1.15's train_and_evaluate roles): the chief trains to max_steps on the
    workers (the loss falls), the workers end by themselves once it has ended, the
    evaluator evaluates the checkpoints up to the last one, and only the chief writes them."""
    _, migrated = parameter_servers
    results = _ps_job(sys.executable, migrated, tmp_path / "model", 200, workers=2, evaluator=True)
    for kind, (code, out) in results.items():
        assert code == 0, (kind, out[-3000:])
    chief = results[("chief", 0)][1]
    losses = _losses(chief)
    assert len(losses) >= 30 and np.mean(losses[-5:]) < 0.2 * np.mean(losses[:5]), losses
    for i in range(2):
        assert "runs the steps the chief schedules" in results[("worker", i)][1]
        assert "KERNEL" not in results[("worker", i)][1]
    final = [l for l in results[("evaluator", 0)][1].splitlines() if l.startswith("EVALUATION ")]
    assert final and "global_step=200" in final[-1], results[("evaluator", 0)][1][-3000:]
    accuracy = float(final[-1].split("accuracy=")[1].split()[0])
    assert accuracy > 0.9, final[-1]
    assert _latest_step(tmp_path / "model") == 200


def test_a_lost_worker_never_stops_a_parameter_server_job(parameter_servers, tmp_path):
    """#54: worker 1 of a parameter-server Estimator (chief, ps, two workers) killed once
    the chief wrote model.ckpt-20: in 1 of 3 trials the chief stopped, saying a parameter
    server was lost (a waited step's values died with the worker before they were copied).
    The coordinator's steps go to the other workers; a step whose values were lost runs
    again; only a parameter server's loss stops the job. Eight trials, each to max_steps."""
    _, migrated = parameter_servers
    for trial in range(8):
        model_dir = tmp_path / ("trial%d" % trial)
        cluster = {"chief": ["localhost:%d" % _free_port()], "ps": ["localhost:%d" % _free_port()],
                   "worker": ["localhost:%d" % _free_port() for _ in range(2)]}
        kinds = [("ps", 0), ("worker", 0), ("worker", 1), ("chief", 0)]
        logs = {kind: pathlib.Path("%s.%s%d" % (model_dir, *kind)) for kind in kinds}
        tasks = {kind: _task(sys.executable, migrated, [str(model_dir), "60"], _env(cluster, kind), logs[kind])
                 for kind in kinds}
        try:
            _kill_at(model_dir, 20, tasks[("chief", 0)], tasks[("worker", 1)])
            code = tasks[("chief", 0)].wait(timeout=240)
        finally:
            for task in tasks.values():
                task.kill()
                task.wait()
        err = pathlib.Path(str(logs[("chief", 0)]) + ".err").read_text()
        assert code == 0, (trial, err[-3000:])
        assert _latest_step(model_dir) == 60, trial
