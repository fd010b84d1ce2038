"""Multi-GPU training in the form of TensorFlow's CIFAR-10 multi-GPU trainer: the global
batch split with `tf.split`, one tower per device under `tf.name_scope('tower_%d')`,
variables made with `tf.get_variable` and shared through
`tf.get_variable_scope().reuse_variables()`, each tower's gradients from one
`GradientDescentOptimizer`, averaged by hand and applied with a global step; the first
tower alone measures accuracy on its slice (`if i == 0:`, as the multi-GPU tutorials do). Two virtual
CPU devices stand in for two GPUs (`set_virtual_device_configuration`, in TF 1.15 as in 2)."""
import numpy as np
import tensorflow as tf

CPU = tf.config.experimental.list_physical_devices("CPU")[0]
tf.config.experimental.set_virtual_device_configuration(
    CPU, [tf.config.experimental.VirtualDeviceConfiguration()] * 2)

NUM_GPUS = 2
BATCH = 24  # global
rng = np.random.RandomState(7)
inputs = rng.randn(240, 5).astype(np.float32)
labels = (inputs.dot(rng.randn(5)) > 0).astype(np.int64)


def inference(x):
    w1 = tf.get_variable("w1", [5, 16], initializer=tf.truncated_normal_initializer(stddev=0.4, seed=1))
    b1 = tf.get_variable("b1", [16], initializer=tf.constant_initializer(0.1))
    hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
    w2 = tf.get_variable("w2", [16, 2], initializer=tf.truncated_normal_initializer(stddev=0.4, seed=2))
    b2 = tf.get_variable("b2", [2], initializer=tf.zeros_initializer())
    return tf.matmul(hidden, w2) + b2


def tower_loss(x, y):
    logits = inference(x)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)), logits


def average_gradients(tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = []
        for g, _ in grad_and_vars:
            grads.append(tf.expand_dims(g, 0))
        grad = tf.reduce_mean(tf.concat(axis=0, values=grads), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    return average_grads


global_step = tf.get_variable("global_step", [], initializer=tf.constant_initializer(0),
                              trainable=False, dtype=tf.int64)
opt = tf.train.GradientDescentOptimizer(0.5)
images = tf.placeholder(tf.float32, [BATCH, 5])
targets = tf.placeholder(tf.int64, [BATCH])
image_splits = tf.split(images, NUM_GPUS)
target_splits = tf.split(targets, NUM_GPUS)
tower_grads = []
with tf.variable_scope(tf.get_variable_scope()):
    for i in range(NUM_GPUS):
        with tf.device("/gpu:%d" % i):
            with tf.name_scope("tower_%d" % i) as scope:
                loss, logits = tower_loss(image_splits[i], target_splits[i])
                tf.get_variable_scope().reuse_variables()
                grads = opt.compute_gradients(loss)
                if i == 0:  # the first tower alone measures accuracy, on its slice
                    correct = tf.equal(tf.argmax(logits, 1), target_splits[i])
                    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
                tower_grads.append(grads)
grads = average_gradients(tower_grads)
train_op = opt.apply_gradients(grads, global_step=global_step)

config = tf.ConfigProto(allow_soft_placement=True)
with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(12):
        start = (step * BATCH) % 240
        feed = {images: inputs[start:start + BATCH], targets: labels[start:start + BATCH]}
        _, loss_value, acc = sess.run([train_op, loss, accuracy], feed_dict=feed)
        print("step %d: loss %.6f accuracy %.4f" % (step, loss_value, acc))
    print("global step", sess.run(global_step))
