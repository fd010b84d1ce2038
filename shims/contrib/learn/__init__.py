"""tf.contrib.learn's parts with a home here: ``preprocessing`` (VocabularyProcessor and
its vocabulary, reading and writing TF 1.15's pickles). Its Estimators are
``shims.estimator``'s."""
from shims.contrib.learn import preprocessing

__all__ = ["preprocessing"]
