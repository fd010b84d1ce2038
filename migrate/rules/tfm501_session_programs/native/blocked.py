"""What the native form does not write yet (pure tables): the graph code a program using it
keeps in graph mode (through GraphProgram), and the Plan's fields that do the same."""
from __future__ import annotations

from typing import Optional

# graph code whose native form is not written here (state, collections, summaries, layers,
# control flow over ops, assignments): a program using it converts through GraphProgram
# (``tf.name_scope`` in a function of the graph only names its ops, as in a step)
NOT_NATIVE = ("tf.train.", "tf.summary.", "tf.layers.", "tf.contrib.", "tf.keras.", "tf.estimator.",
              "tf.data.", "tf.metrics.", "tf.get_variable", "tf.Variable", "tf.placeholder", "tf.assign",
              "tf.global_variables", "tf.trainable_variables", "tf.local_variables", "tf.get_collection",
              "tf.add_to_collection", "tf.control_dependencies", "tf.group", "tf.losses.get_",
              "tf.get_default_graph", "tf.py_func", "tf.Print", "tf.variables_initializer",
              "tf.make_template", "tf.nn.rnn_cell.", "tf.nn.dynamic_rnn", "tf.nn.static_rnn",
              "tf.nn.bidirectional_dynamic_rnn", "tf.while_loop", "tf.no_op", "tf.identity",
              "tf.Session", "tf.InteractiveSession", "tf.get_local_variable", "tf.variable_scope",
              "tf.device", "tf.random.set_seed", "tf.set_random_seed")
PLAN_BLOCKERS = (  # what the native form does not write yet, by the Plan's field
    ("passed", "the session is passed to a function"),
    ("queue_runners", "queue runners"),
    ("hook_reads", "hooks"), ("handed_names", "graph values handed to functions"),
    ("kept", "graph values handed to functions"), ("made_feeds", "feed dicts made by a function"),
    ("program_of", "the session is run by a function"),
    ("makers", "placeholders made by a function"), ("switches", "a graph-mode switch"),
    ("graph_savers", "a tf.train.Saver"), ("eager_runs", ""),
)



def planned(plan, of_class: bool) -> Optional[str]:
    """Why the plan alone rules the native form out (a session that is not the program's
    own, a form of it not written natively), else None; ``of_class``: read with its class."""
    if bool(plan.self_name) != of_class:
        return "a class's program read without its class"
    for owned, why in ((plan.monitored or plan.scaffold is not None, "a monitored session"),
                       (plan.supervisor is not None, "a tf.train.Supervisor"),
                       (plan.workers is not None, "a program on a TF1 cluster"),
                       (plan.anchorless or plan.handed and not of_class, "the session is handed in")):
        if owned:
            return why
    return next((why for field, why in PLAN_BLOCKERS if why and getattr(plan, field)), None)


__all__ = ["NOT_NATIVE", "PLAN_BLOCKERS", "planned"]
