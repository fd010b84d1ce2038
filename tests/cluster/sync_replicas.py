"""Synchronous between-graph replication as SyncReplicasOptimizer's documentation shows
it, with TF 1.x's mnist_replica.py flags for the cluster: a parameter server, workers under
replica_device_setter, SyncReplicasOptimizer and its hook, MonitoredTrainingSession(master=
server.target). Each worker trains on its slice of the same global batch."""
import time

import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "comma-separated host:port pairs")
flags.DEFINE_string("worker_hosts", "", "comma-separated host:port pairs")
flags.DEFINE_string("job_name", "", "one of 'ps', 'worker'")
flags.DEFINE_integer("task_index", 0, "index of the task within its job")
flags.DEFINE_string("train_dir", "", "checkpoint directory")
flags.DEFINE_integer("last_step", 12, "global step to stop at")
flags.DEFINE_float("pause", 0.0, "seconds between steps")
FLAGS = flags.FLAGS

GLOBAL_BATCH = 8


def main(unused_argv):
    ps_hosts = FLAGS.ps_hosts.split(",")
    worker_hosts = FLAGS.worker_hosts.split(",")
    num_workers = len(worker_hosts)
    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
        return
    is_chief = FLAGS.task_index == 0
    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % FLAGS.task_index, cluster=cluster)):
        features = tf.placeholder(tf.float32, [None, 3], name="features")
        targets = tf.placeholder(tf.float32, [None, 1], name="targets")
        hidden = tf.layers.dense(features, 8, activation=tf.nn.tanh, name="hidden",
                                 kernel_initializer=tf.constant_initializer(0.1))
        prediction = tf.layers.dense(hidden, 1, name="out", kernel_initializer=tf.constant_initializer(-0.2))
        loss = tf.losses.mean_squared_error(targets, prediction)
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.AdamOptimizer(0.05)
        opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=num_workers,
                                             total_num_replicas=num_workers, name="sync_replicas")
        train_op = opt.minimize(loss, global_step=global_step)
    # no token ahead: every step waits for every worker's gradient (TF 1.15 is deterministic
    # so; by default a worker's first steps may run on variables one update behind)
    sync_replicas_hook = opt.make_session_run_hook(is_chief, num_tokens=0)
    rng = np.random.RandomState(0)
    losses = []
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                           checkpoint_dir=FLAGS.train_dir, save_checkpoint_steps=5,
                                           hooks=[sync_replicas_hook,
                                                  tf.train.StopAtStepHook(last_step=FLAGS.last_step)],
                                           stop_grace_period_secs=5) as sess:
        print("START", sess.run(global_step), flush=True)
        while not sess.should_stop():
            batch = rng.randn(GLOBAL_BATCH, 3).astype(np.float32)
            mine = batch[FLAGS.task_index::num_workers]
            _, value = sess.run([train_op, loss], feed_dict={features: mine,
                                                             targets: np.sin(mine.sum(1, keepdims=True))})
            losses.append(value)
            time.sleep(FLAGS.pause)
    print("LOSSES", " ".join("%.7f" % v for v in losses))


if __name__ == "__main__":
    tf.app.run()
