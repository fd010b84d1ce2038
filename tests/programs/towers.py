"""Multi-tower training as the multi-GPU tutorials write it: `with tf.device('/cpu:0'):`
around the whole program, one tower per device under a device function that pins variables
to the CPU, the global batch sliced per tower, gradients averaged by hand into the same
name, `allow_soft_placement` (this machine has no GPU: TF1 places the towers on the CPU)."""
import numpy as np
import tensorflow as tf

num_gpus = 2
batch_size = 16  # per tower
learning_rate = 0.05
rng = np.random.RandomState(5)
features = rng.randn(512, 6).astype(np.float32)
targets = features.dot(rng.randn(6, 1).astype(np.float32)) + 0.1


def tower_net(x, reuse):
    with tf.variable_scope("TowerNet", reuse=reuse):
        hidden = tf.layers.dense(x, 8, activation=tf.nn.tanh,
                                 kernel_initializer=tf.truncated_normal_initializer(stddev=0.3, seed=2))
        return tf.layers.dense(hidden, 1, kernel_initializer=tf.truncated_normal_initializer(stddev=0.3, seed=3))


def average_gradients(tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(grads, 0), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    return average_grads


PS_OPS = ['Variable', 'VariableV2', 'VarHandleOp', 'AutoReloadVariable']


def assign_to_device(device, ps_device='/cpu:0'):
    def _assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        if node_def.op in PS_OPS:
            return ps_device
        return device
    return _assign


with tf.device('/cpu:0'):
    tower_grads = []
    reuse_vars = False
    X = tf.placeholder(tf.float32, [None, 6])
    Y = tf.placeholder(tf.float32, [None, 1])
    for i in range(num_gpus):
        with tf.device(assign_to_device('/gpu:{}'.format(i), ps_device='/cpu:0')):
            _x = X[i * batch_size: (i + 1) * batch_size]
            _y = Y[i * batch_size: (i + 1) * batch_size]
            prediction = tower_net(_x, reuse=reuse_vars)
            loss_op = tf.reduce_mean(tf.square(prediction - _y))
            optimizer = tf.train.MomentumOptimizer(learning_rate, 0.9)
            grads = optimizer.compute_gradients(loss_op)
            reuse_vars = True
            tower_grads.append(grads)
    tower_grads = average_gradients(tower_grads)
    train_op = optimizer.apply_gradients(tower_grads)
    init = tf.global_variables_initializer()

    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(init)
        for step in range(1, 31):
            start = ((step - 1) * batch_size * num_gpus) % 512
            batch_x = features[start:start + batch_size * num_gpus]
            batch_y = targets[start:start + batch_size * num_gpus]
            sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})
            if step % 5 == 0 or step == 1:
                loss = sess.run(loss_op, feed_dict={X: batch_x, Y: batch_y})
                print("Step " + str(step) + ": Minibatch Loss= " + "{:.6f}".format(loss))
        print("Optimization Finished!")
