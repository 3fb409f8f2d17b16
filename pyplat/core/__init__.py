"""Core objects: Platform, Device, Context, Memory, Program, Kernel, Queue, Event.

They know the spec's semantics (lifetimes, implicit retains, ordering) and nothing of C pointers
or error-code marshalling; that is the API layer's job.
"""
