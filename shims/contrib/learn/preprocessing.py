"""``tf.contrib.learn.preprocessing`` (text CNN tutorials' ``VocabularyProcessor``) with TF
1.15's behaviour, in plain Python and NumPy.

The same tokens, the same ids (in order of first appearance; with ``min_frequency``, by
falling frequency then alphabetically, as TF1 trimmed), the same padding and truncation,
and the same pickles: ``VocabularyProcessor.restore`` reads a vocabulary TF 1.15 saved,
and ``save`` writes one TF 1.15's ``restore`` reads (the pickle names TF1's classes, as
TF1 wrote them), so a model trained on TF1 keeps its word ids.
"""
from __future__ import annotations

import collections
import io
import pickle
import re
import types

import numpy as np

__all__ = ["ByteProcessor", "CategoricalVocabulary", "VocabularyProcessor", "tokenizer"]

TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|[\'\w\-]+", re.UNICODE)
# where TF 1.15 defined these (what its pickles name)
_TF1_TEXT = "tensorflow.contrib.learn.python.learn.preprocessing.text"
_TF1_VOCABULARY = "tensorflow.contrib.learn.python.learn.preprocessing.categorical_vocabulary"


def tokenizer(iterator):
    """TF 1.15's tokenizer: each document's words (``\\w``, ``'`` and ``-`` runs, with
    capitalised words split at case changes)."""
    for value in iterator:
        yield TOKENIZER_RE.findall(value)


class CategoricalVocabulary:
    """Maps categories (words) to ids from 1; 0 is the unknown token."""

    def __init__(self, unknown_token="<UNK>", support_reverse=True):
        self._unknown_token = unknown_token
        self._mapping = {unknown_token: 0}
        self._support_reverse = support_reverse
        if support_reverse:
            self._reverse_mapping = [unknown_token]
        self._freq = collections.defaultdict(int)
        self._freeze = False

    def __len__(self):
        return len(self._mapping)

    def freeze(self, freeze=True):
        self._freeze = freeze

    def get(self, category):
        """The category's id; a new one gets the next id unless the vocabulary is frozen
        (then 0, the unknown token's)."""
        if category not in self._mapping:
            if self._freeze:
                return 0
            self._mapping[category] = len(self._mapping)
            if self._support_reverse:
                self._reverse_mapping.append(category)
        return self._mapping[category]

    def add(self, category, count=1):
        category_id = self.get(category)
        if category_id <= 0:
            return
        self._freq[category] += count

    def trim(self, min_frequency, max_frequency=-1):
        """Keeps categories seen more than ``min_frequency`` times (and less than
        ``max_frequency``), re-numbered by falling frequency, ties alphabetically."""
        ordered = sorted(sorted(self._freq.items(), key=lambda x: (isinstance(x[0], str), x[0])),
                         key=lambda x: x[1], reverse=True)
        self._mapping = {self._unknown_token: 0}
        if self._support_reverse:
            self._reverse_mapping = [self._unknown_token]
        idx = 1
        for category, count in ordered:
            if max_frequency > 0 and count >= max_frequency:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = idx
            idx += 1
            if self._support_reverse:
                self._reverse_mapping.append(category)
        self._freq = dict(ordered[:idx - 1])

    def reverse(self, class_id):
        if not self._support_reverse:
            raise ValueError("This vocabulary wasn't initialized with support_reverse to "
                             "support reverse() function.")
        return self._reverse_mapping[class_id]


class ByteProcessor:
    """Documents as sequences of their UTF-8 bytes, padded with zeros."""

    def __init__(self, max_document_length):
        self.max_document_length = max_document_length

    def fit(self, x):
        pass

    def fit_transform(self, x):
        return self.transform(x)

    def reverse(self, x):
        for data in x:
            document = np.trim_zeros(data.astype(np.int8), trim="b").tobytes()
            try:
                yield document.decode("utf-8")
            except UnicodeDecodeError:
                yield ""

    def transform(self, x):
        for document in x:
            if isinstance(document, str):
                document = document.encode("utf-8")
            buff = np.frombuffer(memoryview(document)[:self.max_document_length], dtype=np.uint8)
            yield np.pad(buff, (0, self.max_document_length - len(buff)), "constant")


class VocabularyProcessor:
    """Maps documents to fixed-length sequences of word ids (0 pads and marks unknown words)."""

    def __init__(self, max_document_length, min_frequency=0, vocabulary=None, tokenizer_fn=None):
        self.max_document_length = max_document_length
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary if vocabulary else CategoricalVocabulary()
        self._tokenizer = tokenizer_fn if tokenizer_fn else tokenizer

    def fit(self, raw_documents, unused_y=None):
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents, unused_y=None):
        self.fit(raw_documents)
        return self.transform(raw_documents)

    def transform(self, raw_documents):
        """One int64 array of ``max_document_length`` ids per document (a generator)."""
        for tokens in self._tokenizer(raw_documents):
            word_ids = np.zeros(self.max_document_length, np.int64)
            for idx, token in enumerate(tokens):
                if idx >= self.max_document_length:
                    break
                word_ids[idx] = self.vocabulary_.get(token)
            yield word_ids

    def reverse(self, documents):
        for item in documents:
            yield " ".join(self.vocabulary_.reverse(class_id) for class_id in item)

    def save(self, filename):
        """Pickles the processor as TF 1.15 did (TF1's ``restore`` reads the file)."""
        buffer = io.BytesIO()
        _TF1Pickler(buffer, protocol=3).dump(self)
        with open(filename, "wb") as handle:
            handle.write(buffer.getvalue())

    @classmethod
    def restore(cls, filename):
        """A processor saved by TF 1.15 (or by ``save``)."""
        with open(filename, "rb") as handle:
            return _TF1Unpickler(handle).load()


# TF 1.15's names of what the pickles hold <-> the objects here
_TF1_NAMES = {(_TF1_TEXT, "VocabularyProcessor"): VocabularyProcessor,
              (_TF1_TEXT, "ByteProcessor"): ByteProcessor,
              (_TF1_TEXT, "tokenizer"): tokenizer,
              (_TF1_VOCABULARY, "CategoricalVocabulary"): CategoricalVocabulary}
_OURS = {id(obj): where for where, obj in _TF1_NAMES.items()}


class _TF1Pickler(pickle._Pickler):
    """Writes TF1's module paths for the classes and the tokenizer here."""

    def save_global(self, obj, name=None):
        where = _OURS.get(id(obj))
        if where is None:
            return super().save_global(obj, name)
        self.write(pickle.GLOBAL + f"{where[0]}\n{where[1]}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[types.FunctionType] = save_global  # functions are saved through the table


class _TF1Unpickler(pickle.Unpickler):
    """Reads TF1's (and TF 1.15's tensorflow_core.) module paths as the objects here."""

    def find_class(self, module, name):
        module = "tensorflow." + module[len("tensorflow_core."):] if module.startswith("tensorflow_core.") \
            else module
        found = _TF1_NAMES.get((module, name))
        return found if found is not None else super().find_class(module, name)
