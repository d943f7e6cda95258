"""Discovery, the first stage: which files a run reads (walked, filtered by the configuration's globs and the
project's ignore files), and how each is read."""
