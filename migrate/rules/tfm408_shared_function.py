"""TFM408: one tf.function called with different models or optimizers."""
from typing import Dict

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import module_facts


class SharedFunction(Rule):
    code = "TFM408"
    needle = needles.TF_FUNCTION
    summary = "one tf.function called with different models/optimizers creates variables on a later call"
    lint = True
    explanation = """
A tf.function traced with one optimizer (or model) creates that object's variables on its
first trace; calling it with another instance traces again and tries to create variables
on a non-first call, which fails ("tf.function only supports singleton tf.Variables
created on the first call"). Make one tf.function per model/optimizer (for example a
factory that returns a fresh `tf.function`), or create all variables up front.
"""
    before = """
import tensorflow as tf


@tf.function
def train_step(model, optimizer, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
adam = tf.keras.optimizers.Adam()
sgd = tf.keras.optimizers.SGD()
train_step(model, adam, x)
train_step(model, sgd, x)
"""
    after = """
import tensorflow as tf


def make_train_step(model, optimizer):
    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return train_step


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
adam = tf.keras.optimizers.Adam()
sgd = tf.keras.optimizers.SGD()
train_adam = make_train_step(model, adam)
train_sgd = make_train_step(model, sgd)
train_adam(x)
train_sgd(x)
"""

    def _instances(self) -> Dict[str, str]:
        """Module names bound to optimizer/model instances (imports are resolved by now)."""
        if hasattr(self, "instances"):
            return self.instances
        self.instances: Dict[str, str] = {}
        self.seen: Dict[tuple, str] = {}
        for stmt in self.ctx.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and \
                            len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                        kind = self._kind(small.value)
                        if kind:
                            self.instances[small.targets[0].target.value] = kind
        return self.instances

    def _kind(self, call: cst.Call):
        name = self.ctx.keras(call.func) or ""
        last = name.rsplit(".", 1)[-1]
        if name.startswith("keras.optimizers.") and last[:1].isupper():
            return "optimizer"
        if name in ("keras.Model", "keras.Sequential", "keras.models.Model", "keras.models.Sequential"):
            return "model"
        return None

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name) or node.func.value not in module_facts(self.ctx).tf_functions:
            return
        instances = self._instances()
        for index, a in enumerate(node.args):
            key = (node.func.value, a.keyword.value if a.keyword else index)
            if isinstance(a.value, cst.Name) and a.value.value in instances:
                first = self.seen.setdefault(key, a.value.value)
                if first != a.value.value:
                    kind = instances[a.value.value]
                    self.report(node, f"{node.func.value}() was traced with the {kind} {first}; "
                                      f"calling it with {a.value.value} creates variables on a "
                                      "non-first call (use one tf.function per " + kind + ")")
