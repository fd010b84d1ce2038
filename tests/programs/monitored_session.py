"""The cifar10_train form: a tf.train.MonitoredTrainingSession inside a function under
`with tf.Graph().as_default():`, with a checkpoint dir (saved every 10 steps), a
StopAtStepHook, a NanTensorHook and a logging hook class of the program's own that asks
for the loss with SessionRunArgs; `while not mon_sess.should_stop(): mon_sess.run(...)`."""
import sys

import numpy as np
import tensorflow as tf

train_dir = sys.argv[1]
batch_size = 32
rng = np.random.RandomState(11)
features = rng.randn(320, 5).astype(np.float32)
targets = np.tanh(features.dot(rng.randn(5, 1).astype(np.float32)))


def inference(x):
    hidden = tf.layers.dense(x, 16, activation=tf.nn.relu, name="hidden",
                             kernel_initializer=tf.truncated_normal_initializer(stddev=0.2, seed=4))
    return tf.layers.dense(hidden, 1, name="out",
                           kernel_initializer=tf.truncated_normal_initializer(stddev=0.2, seed=5))


def train():
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.float32, [None, 1])
        loss = tf.reduce_mean(tf.square(inference(x) - y))
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)

        class _LoggerHook(tf.train.SessionRunHook):
            """Logs loss."""

            def begin(self):
                self._step = -1

            def before_run(self, run_context):
                self._step += 1
                return tf.train.SessionRunArgs(loss)  # Asks for loss value.

            def after_run(self, run_context, run_values):
                if self._step % 5 == 0:
                    print("step %d, loss = %.6f" % (self._step, run_values.results))

        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=train_dir,
                hooks=[tf.train.StopAtStepHook(last_step=31),
                       tf.train.NanTensorHook(loss),
                       _LoggerHook()],
                save_checkpoint_steps=10) as mon_sess:
            step = 0
            while not mon_sess.should_stop():
                start = (step * batch_size) % 320
                mon_sess.run(train_op, feed_dict={x: features[start:start + batch_size],
                                                  y: targets[start:start + batch_size]})
                step += 1
        print("steps run", step)


if __name__ == "__main__":
    train()
