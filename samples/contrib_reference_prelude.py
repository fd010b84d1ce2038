"""tf.contrib for the TF1 reference runs of the contrib samples (TF 2 has no tf.contrib).

`tf.contrib.layers`, `tf.contrib.slim` and `tf.contrib.framework` were moved out of
TensorFlow into the tf-slim package with their code unchanged, so tf-slim stands in for
them here; `tf.contrib.rnn`'s cells were `tf.nn.rnn_cell`'s, which the reference run
(tf.compat.v1 with legacy Keras) still has. In the reference run `import tensorflow` gives
tf.compat.v1, as the legacy code sees it. (shims.contrib is not used here.)"""
import os
import runpy
import sys
import types

import tensorflow as v1

# tf-slim 1.1.0 reaches for TensorFlow internals TF 2.21 moved (ops.Tensor,
# control_flow_ops.cond, tf_keras.legacy_tf_layers, ...); this loader gives the old names
# back. It is run by path: it is the environment fix only, not shims' contrib code.
_loader = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shims",
                       "contrib", "_slim.py")
tf_slim = runpy.run_path(_loader)["load"]()

rnn = types.ModuleType("tensorflow.contrib.rnn")
for _name in ("RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
              "LSTMStateTuple", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper"):
    setattr(rnn, _name, getattr(v1.nn.rnn_cell, _name))
rnn.static_rnn = v1.nn.static_rnn

framework = types.ModuleType("tensorflow.contrib.framework")
for _name in ("arg_scope", "add_arg_scope", "get_variables", "get_model_variables",
              "get_or_create_global_step", "model_variable", "variable"):
    setattr(framework, _name, getattr(tf_slim, _name))

contrib = types.ModuleType("tensorflow.contrib")
contrib.layers, contrib.slim, contrib.rnn, contrib.framework = tf_slim, tf_slim, rnn, framework
v1.contrib = contrib
sys.modules.update({"tensorflow.contrib": contrib, "tensorflow.contrib.layers": tf_slim,
                    "tensorflow.contrib.slim": tf_slim, "tensorflow.contrib.rnn": rnn,
                    "tensorflow.contrib.framework": framework})
