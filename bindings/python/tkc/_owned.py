"""Owned: the base of the Python objects that own a libtkc handle (a model, a state, a tokenizer):
close() frees it; `with` closes it at the end of the block, and the garbage collector at the latest."""


class Owned:
    def close(self):  # pragma: no cover (every subclass has its own)
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass
