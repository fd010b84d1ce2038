"""An Estimator trained with `RunConfig(train_distribute=tf.distribute.MirroredStrategy(...))`,
as TF 1.13-1.15 trainers wrote it (the official models' `distribution_utils`): model_fn runs
once per replica on its own batch from input_fn (batch normalization keeps each replica's
moving statistics, their mean is saved), the v1 optimizer combines the replicas'
gradients (each replica's loss divided by their number), the step logged every two steps,
a checkpoint every five; then evaluate (`eval_distribute`: each replica its own batch per
step, the metrics summed across them) and predict. Two virtual CPU devices stand in for two
GPUs (`tf.config.experimental.set_virtual_device_configuration`, as TF 1.15 made them)."""
import numpy as np
import tensorflow as tf

CPU = tf.config.experimental.list_physical_devices("CPU")[0]
tf.config.experimental.set_virtual_device_configuration(
    CPU, [tf.config.experimental.VirtualDeviceConfiguration()] * 2)

rng = np.random.RandomState(11)
FEATURES = rng.randn(96, 5).astype(np.float32)
LABELS = (FEATURES.dot(rng.randn(5, 1)) > 0).astype(np.int32).ravel()


def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS))
    return dataset.repeat(2).batch(8)


def model_fn(features, labels, mode, params):
    training = mode == tf.estimator.ModeKeys.TRAIN
    normed = tf.layers.batch_normalization(features["x"], training=training, name="bn")
    hidden = tf.layers.dense(normed, params["hidden"], activation=tf.nn.relu,
                             kernel_initializer=tf.glorot_uniform_initializer(seed=1), name="hidden")
    logits = tf.layers.dense(hidden, 2, kernel_initializer=tf.glorot_uniform_initializer(seed=2),
                             name="logits")
    predictions = {"classes": tf.argmax(logits, 1), "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        accuracy = tf.metrics.accuracy(labels, predictions["classes"])
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(model_dir):
    strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:1"])
    config = tf.estimator.RunConfig(model_dir=model_dir, train_distribute=strategy,
                                    eval_distribute=strategy,
                                    save_checkpoints_steps=5, log_step_count_steps=2,
                                    tf_random_seed=7)
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=config, params={"hidden": 6})
    estimator.train(input_fn, steps=9)
    print("evaluation", estimator.evaluate(input_fn, steps=4))
    for i, prediction in enumerate(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(
            {"x": FEATURES[:3]}).batch(3))):
        print("prediction", i, prediction["classes"], prediction["probabilities"])


if __name__ == "__main__":
    import sys
    tf.logging.set_verbosity(tf.logging.INFO)
    main(sys.argv[1])
