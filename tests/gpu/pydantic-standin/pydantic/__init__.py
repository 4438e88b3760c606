"""A stand-in for pydantic, for the GPU lane only.

Megatron-LM core 0.16 imports pydantic (for megatron.rl) while it parses
arguments; pretraining never uses these classes.  The GPU machine has no
pydantic and nothing can be installed there, so validate_args.py puts this
folder on sys.path when `import pydantic` fails.
"""


class BaseModel:
    def __init_subclass__(cls, **kwargs):  # class Foo(BaseModel, extra='allow')
        super().__init_subclass__()

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)


def ConfigDict(**kwargs):
    return dict(kwargs)


def Field(default=None, **kwargs):
    return default
