"""Datasets on disk: self-play shards and labelled positions (:mod:`.datasets`)."""
