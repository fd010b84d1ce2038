"""A SingularMonitoredSession with hooks: TF1's StopAtStepHook ending the loop, and a hook
class of the program's own that asks for the loss with SessionRunArgs and prints it every
other step (the evaluation and fine-tuning scripts' form: no checkpoints written)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
data = rng.randn(32, 3).astype(np.float32)
labels = (data[:, :1] - data[:, 1:2] > 0).astype(np.float32)


class PrintLoss(tf.train.SessionRunHook):
    def __init__(self, loss, every):
        self.loss, self.every, self.calls = loss, every, 0

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self.loss)

    def after_run(self, run_context, run_values):
        self.calls += 1
        if self.calls % self.every == 0:
            print("hook: call %d loss %.6f" % (self.calls, run_values.results))


x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
logits = tf.layers.dense(x, 1, name="logits")
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
step = tf.train.get_or_create_global_step()
train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)

hooks = [tf.train.StopAtStepHook(last_step=9), PrintLoss(loss, 2)]
with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
    while not sess.should_stop():
        _, value = sess.run([train_op, loss], feed_dict={x: data, y: labels})
        print("loss %.6f" % value)
