"""Stand-ins for ``tensorflow.examples.tutorials``, which TF 2 no longer ships."""
