"""Multi-GPU towers with batch normalization, as TensorFlow's CIFAR-10 multi-GPU trainer
keeps it: `tf.layers` named inside `tf.name_scope('tower_%d')` (TF1 names their variables by
variable scope: `h/kernel`, not `tower_0/h/kernel`), each tower under `tf.device('/gpu:%d')`
on a machine without GPUs (two virtual CPU devices; TF1's soft placement), and only the last
tower's batch-norm updates run (`get_collection(UPDATE_OPS, scope)` after the loop). Its
towers stay in one graph: replicas would each keep their own moving statistics."""
import numpy as np
import tensorflow as tf
CPU = tf.config.experimental.list_physical_devices('CPU')[0]
tf.config.experimental.set_virtual_device_configuration(CPU, [tf.config.experimental.VirtualDeviceConfiguration()] * 2)

N = 2
rng = np.random.RandomState(1)
data = rng.randn(160, 6).astype(np.float32)
target = (data.sum(1) > 0).astype(np.int64)


def average_gradients(tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        average_grads.append((tf.reduce_mean(tf.concat(grads, 0), 0), grad_and_vars[0][1]))
    return average_grads


x = tf.placeholder(tf.float32, [32, 6])
y = tf.placeholder(tf.int64, [32])
xs, ys = tf.split(x, N), tf.split(y, N)
opt = tf.train.GradientDescentOptimizer(0.2)
tower_grads = []
with tf.variable_scope(tf.get_variable_scope()):
    for i in range(N):
        with tf.device('/gpu:%d' % i), tf.name_scope('tower_%d' % i) as scope:
            h = tf.layers.dense(xs[i], 8, kernel_initializer=tf.glorot_uniform_initializer(seed=1), name="h")
            h = tf.layers.batch_normalization(h, training=True, name="bn")
            logits = tf.layers.dense(tf.nn.relu(h), 2, kernel_initializer=tf.glorot_uniform_initializer(seed=2), name="out")
            loss = tf.losses.sparse_softmax_cross_entropy(ys[i], logits)
            tf.get_variable_scope().reuse_variables()
            batchnorm_updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope)
            grads = opt.compute_gradients(loss)
            tower_grads.append(grads)
apply_op = opt.apply_gradients(average_gradients(tower_grads))
train_op = tf.group(apply_op, *batchnorm_updates)
with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(8):
        s = (step * 32) % 160
        _, l = sess.run([train_op, loss], {x: data[s:s + 32], y: target[s:s + 32]})
        print("step", step, "loss %.6f" % l)
