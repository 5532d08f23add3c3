"""The unit-of-work boundary every HTTP view runs in, applied in one place.

register_blueprints (routes/__init__.py) wraps every view function with
unit_of_work() once the blueprints are registered, as indico's RH.process commits
around every handler and warehouse's transaction manager around every view. A view
therefore parses, calls its service and serialises; it never commits:

- a writing request (its declared intent, support.route_writes: every method but
  GET/HEAD/OPTIONS unless marked @reads, and a GET marked @writes) runs the whole
  view through store.run_unit: committed when the view returns, re-run from the
  start when the database asks for a retry (deadlock, serialization failure, SQLite
  "database is locked"), and, when the view raises a ServiceError, ended as the
  error says: a rejection that is itself a state change (`commit = True`: a killed
  code, a counted miss) is committed, any other rolled back;
- a reading request runs the view as it is; its unit ends at teardown. A reader
  that became a writer midway (store.declare(True): a client's metadata document
  kept while answering GET /oauth/authorize) is committed when the view returns;
- a view marked @steps commits its own units, one per step, each through
  store.run_unit (sign-in and the password change: the attempt is counted and
  committed before argon2 runs with no transaction open). The boundary never re-runs
  such a view whole (that would count the attempt twice); it only commits what is
  left when the view returns;
- a view marked @spooled is an upload (documents.upload, statements.upload): its
  multipart body is first spooled to temporary files (uploads.file_part, read before
  its unit writes anything), then written in ONE unit through store.run_unit inside
  the spool's block (uploads.spooled_unit, which re-runs only that unit on a retry,
  the spooled part read again from its start). The boundary treats it as @steps and
  never re-runs it whole: the spooled files are closed when the block ends, so a
  re-run of the view would find the part unreadable.

A view written the old way (calling store.commit() or store.run_unit itself) still
behaves: its own commit ends its work, the boundary's commit then has nothing left,
and a unit its inner run_unit gave up on is not re-run again by the boundary.
"""

from __future__ import annotations

from functools import wraps

from .. import store


def steps(view):
    """Mark a view that commits its own units, one per step (see the module docstring)."""
    view._unit_steps = True
    return view


def spooled(view):
    """Mark an upload view: its body spooled first, then written in one unit of its own
    (uploads.spooled_unit; see the module docstring)."""
    return steps(view)


def unit_of_work(view):
    """The view, run inside the request's unit of work (see the module docstring)."""
    if getattr(view, "_unit_steps", False):

        @wraps(view)
        def in_steps(*args, **kwargs):
            result = view(*args, **kwargs)
            store.commit()
            return result

        return in_steps

    @wraps(view)
    def boundary(*args, **kwargs):
        if store.writes():
            return store.run_unit(view, *args, **kwargs)
        result = view(*args, **kwargs)
        if store.writes():  # became a writer midway
            store.commit()
        return result

    return boundary


def apply(app) -> None:
    """Wrap every view function of app (once) in the unit-of-work boundary."""
    for endpoint, view in list(app.view_functions.items()):
        if not getattr(view, "_unit_boundary", False):
            wrapped = unit_of_work(view)
            wrapped._unit_boundary = True
            app.view_functions[endpoint] = wrapped
