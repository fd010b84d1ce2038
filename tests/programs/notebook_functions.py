"""A notebook tutorial's form (Hvass-Labs' TensorFlow tutorials): the graph built at module
level, `session = tf.Session()`, and module functions that run that global session: one
trains (`global total_iterations`, `feed_dict_train = {x: ..., y_true: ...}`), others fetch
graph values they are handed (`plot_conv_weights(weights=weights_conv1)` runs
`session.run(weights)`, `plot_conv_layer(layer=layer_conv1, image=image)`), several
bind a feed dict of the same name (`feed_dict = {x: images, ...}`), and one feeds a dict the
script made (`feed_dict_test`). A `tf.layers.dense` layer's kernel is asked for again by
name (`with tf.variable_scope(layer_name, reuse=True): tf.get_variable("kernel")`) and
fetched. A function builds graph code and fetches it (`prediction = tf.argmax(layer_fc, 1)`,
then `session.run(prediction, ...)`)."""
import numpy as np
import tensorflow as tf

img_size, num_channels, num_classes = 8, 1, 3
img_size_flat = img_size * img_size
rng = np.random.RandomState(5)
train_x = rng.rand(120, img_size_flat).astype(np.float32)
train_cls = (train_x[:, :num_classes].argmax(axis=1))
train_y = np.eye(num_classes, dtype=np.float32)[train_cls]
test_x, test_y, test_cls = train_x[:45], train_y[:45], train_cls[:45]


def new_weights(shape):
    return tf.Variable(tf.truncated_normal(shape, stddev=0.05, seed=1))


def new_biases(length):
    return tf.Variable(tf.constant(0.05, shape=[length]))


def new_conv_layer(input, num_input_channels, filter_size, num_filters):
    shape = [filter_size, filter_size, num_input_channels, num_filters]
    weights = new_weights(shape=shape)
    biases = new_biases(length=num_filters)
    layer = tf.nn.conv2d(input=input, filter=weights, strides=[1, 1, 1, 1], padding='SAME')
    layer += biases
    layer = tf.nn.max_pool(value=layer, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='SAME')
    layer = tf.nn.relu(layer)
    return layer, weights


def flatten_layer(layer):
    layer_shape = layer.get_shape()
    num_features = layer_shape[1:4].num_elements()
    layer_flat = tf.reshape(layer, [-1, num_features])
    return layer_flat, num_features


x = tf.placeholder(tf.float32, shape=[None, img_size_flat], name='x')
x_image = tf.reshape(x, [-1, img_size, img_size, num_channels])
y_true = tf.placeholder(tf.float32, shape=[None, num_classes], name='y_true')
y_true_cls = tf.argmax(y_true, axis=1)
layer_conv1, weights_conv1 = new_conv_layer(input=x_image, num_input_channels=num_channels,
                                            filter_size=3, num_filters=4)
layer_flat, num_features = flatten_layer(layer_conv1)
layer_fc = tf.layers.dense(inputs=layer_flat, units=num_classes, name="layer_fc")


def get_weights_variable(layer_name):
    # the tf.layers API tutorial's way to its weights: the layer's variable, asked for again
    with tf.variable_scope(layer_name, reuse=True):
        variable = tf.get_variable("kernel")
    return variable


weights_fc = get_weights_variable(layer_name="layer_fc")
y_pred = tf.nn.softmax(layer_fc)
y_pred_cls = tf.argmax(y_pred, axis=1)
cross_entropy = tf.nn.softmax_cross_entropy_with_logits_v2(logits=layer_fc, labels=y_true)
cost = tf.reduce_mean(cross_entropy)
optimizer = tf.train.AdamOptimizer(learning_rate=1e-2).minimize(cost)
correct_prediction = tf.equal(y_pred_cls, y_true_cls)
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

session = tf.Session()
session.run(tf.global_variables_initializer())
train_batch_size = 20
total_iterations = 0


def optimize(num_iterations):
    global total_iterations
    for i in range(total_iterations, total_iterations + num_iterations):
        start = (i * train_batch_size) % len(train_x)
        x_batch = train_x[start:start + train_batch_size]
        y_true_batch = train_y[start:start + train_batch_size]
        feed_dict_train = {x: x_batch, y_true: y_true_batch}
        session.run(optimizer, feed_dict=feed_dict_train)
        if i % 5 == 0:
            acc = session.run(accuracy, feed_dict=feed_dict_train)
            print("ITERATION", i + 1, acc)
    total_iterations += num_iterations


feed_dict_test = {x: test_x, y_true: test_y}


def print_accuracy():
    acc = session.run(accuracy, feed_dict=feed_dict_test)
    print("ACCURACY", acc)


def print_test_accuracy():
    cls_pred = np.zeros(shape=len(test_x), dtype=np.int64)
    i = 0
    while i < len(test_x):
        j = min(i + 16, len(test_x))
        feed_dict = {x: test_x[i:j, :], y_true: test_y[i:j, :]}
        cls_pred[i:j] = session.run(y_pred_cls, feed_dict=feed_dict)
        i = j
    correct = (test_cls == cls_pred)
    print("TEST_ACCURACY", correct.sum(), float(correct.sum()) / len(test_x))


def plot_conv_weights(weights, input_channel=0):
    w = session.run(weights)
    print("WEIGHTS", w[:, :, input_channel, :].min(), w.max(), w.mean())


def print_weights(weights):
    w = session.run(weights)
    print("DENSE_WEIGHTS", w.shape[0], w.min(), w.max())


def predict_classes(images):
    # graph code in the function, then fetched there (a seq2seq tutorial's translate()):
    # TF1 added the op to its graph on every call
    prediction = tf.argmax(layer_fc, 1)
    return session.run(prediction, feed_dict={x: images})


def plot_conv_layer(layer, image):
    feed_dict = {x: [image]}
    values = session.run(layer, feed_dict=feed_dict)
    print("LAYER", values.shape[3], values.sum(), values.max())


print_test_accuracy()
optimize(num_iterations=1)
optimize(num_iterations=29)
print_test_accuracy()
print_accuracy()
plot_conv_weights(weights=weights_conv1)
print_weights(weights=weights_fc)
print("PREDICTED", *predict_classes(test_x[:6]))
plot_conv_layer(layer=layer_conv1, image=test_x[0])
plot_conv_layer(layer_conv1, test_x[1])
session.close()
