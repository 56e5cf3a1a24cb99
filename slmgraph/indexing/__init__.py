"""Building an index: the stages, their executors and the pipeline that runs them."""
