"""`ledger-service verify`, the schedules (docs/schedules.md, "Audit events"): the
schedules and their stored occurrences as the trail leaves them (ScheduleTrail, fed
every event by verify_trail's walk), compared with the stored ones (check).

What the events say, and what the service does beside them:
- schedule.created / schedule.changed: the schedule as it is afterwards;
  schedule.deleted: it goes, with its occurrences.
- occurrence.met / matched / skipped / reopened: the occurrence as stored afterwards.
- transaction.posted (or .imported) carrying `schedule: {id, occurs_on}`: that
  occurrence is `posted` by the transaction (a schedule's posting, by the service or a
  person).
- transaction.deleted: what the transaction met is open again (its row goes), what it
  was posted for is stored `open` (schedule_meeting.release).
- a correction (a posting with `replaces`, then the original's transaction.deleted): the
  replacement takes over an occurrence the original was posted for when it still
  qualifies (schedule_meeting.take_over: the schedule active on one of its accounts, its
  entries and description fitting, its date within window_days of the due date); a met
  one taken over has its own occurrence.met event.

check() then names the first schedule or occurrence that differs (a field, one added or
one removed outside the service). Not compared: a schedule's created_at and created_by
(no event carries them); its name_key must be its name's key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from sqlalchemy import inspect, select

from ...extensions import db
from ...models import Schedule, ScheduleOccurrence
from . import accounts, schedule_meeting, schedule_rules, schedules

SCHEDULE_KEYS = ("id", *schedules.FIELDS)
Key = tuple[int, str]  # (schedule_id, occurs_on as ISO text)


@dataclass
class ScheduleTrail:
    schedules: dict[int, dict] = field(default_factory=dict)
    schedule_seq: dict[int, int] = field(default_factory=dict)
    # (schedule_id, occurs_on) -> (status, transaction_id, seq of the event that said so)
    occurrences: dict[Key, tuple[str, int | None, int]] = field(default_factory=dict)
    held: dict[int, set[Key]] = field(default_factory=dict)  # transaction -> met/posted
    # original -> (its replacement's transaction object, seq): until its deletion
    correcting: dict[int, dict] = field(default_factory=dict)

    def _set(self, key: Key, status: str, tx_id: int | None, seq: int) -> None:
        self._drop(key)
        self.occurrences[key] = (status, tx_id, seq)
        if status in schedule_meeting.MET_OR_POSTED and tx_id is not None:
            self.held.setdefault(tx_id, set()).add(key)

    def _drop(self, key: Key) -> None:
        before = self.occurrences.pop(key, None)
        if before is not None and before[1] is not None:
            holding = self.held.get(before[1])
            if holding is not None:
                holding.discard(key)
                if not holding:
                    del self.held[before[1]]

    def apply(self, seq: int, action: str, obj: dict) -> None:
        """Replay one event (any action; those that touch no schedule are passed)."""
        if action in ("schedule.created", "schedule.changed"):
            schedule = {k: obj["schedule"][k] for k in SCHEDULE_KEYS}
            schedule_id = int(schedule["id"])
            self.schedules[schedule_id] = schedule
            self.schedule_seq[schedule_id] = seq
        elif action == "schedule.deleted":
            schedule_id = int(obj["schedule"]["id"])
            self.schedules.pop(schedule_id, None)
            self.schedule_seq[schedule_id] = seq
            for key in [k for k in self.occurrences if k[0] == schedule_id]:
                self._drop(key)
        elif action.startswith("occurrence."):
            o = obj["occurrence"]
            tx_id = o["transaction_id"]
            key = (int(o["schedule_id"]), str(date.fromisoformat(o["occurs_on"])))
            self._set(key, str(o["status"]), None if tx_id is None else int(tx_id), seq)
        elif action in ("transaction.posted", "transaction.imported"):
            tx_id = int(obj["transaction"]["id"])
            if "schedule" in obj:
                made = obj["schedule"]
                key = (int(made["id"]), str(date.fromisoformat(made["occurs_on"])))
                self._set(key, "posted", tx_id, seq)
            if obj.get("replaces") is not None:
                self.correcting[int(obj["replaces"])] = {**obj["transaction"], "seq": seq}
        elif action == "transaction.deleted":
            self._release(int(obj["transaction"]["id"]), seq)

    def _release(self, tx_id: int, seq: int) -> None:
        held = sorted(self.held.pop(tx_id, set()))
        released = []
        for key in held:
            status, _, _ = self.occurrences[key]
            released.append((key, status))
            if status == "met":
                self.occurrences.pop(key)
            else:
                self.occurrences[key] = ("open", None, seq)
        replacement = self.correcting.pop(tx_id, None)
        if replacement is not None and released:
            self._take_over(released, replacement)

    def _take_over(self, released: list[tuple[Key, str]], tx: dict) -> None:
        """schedule_meeting.take_over as the trail sees it: the first occurrence the
        replacement still qualifies for is taken over (a met one by its own
        occurrence.met event, which follows; a posted one here)."""
        parsed = [(int(e["account_id"]), int(e["amount_cents"])) for e in tx["entries"]]
        on_accounts = {a for a, _ in parsed}
        day = date.fromisoformat(tx["occurred_on"])
        for (schedule_id, occurs_on), status in released:
            s = self.schedules.get(schedule_id)
            if s is None or not s["active"] or int(s["account_id"]) not in on_accounts:
                continue
            c = _candidate(s)
            if not schedule_meeting.fits(c, tx["description"], parsed):
                continue
            due = schedule_rules.due_on(date.fromisoformat(occurs_on), c.weekend)
            if abs((day - due).days) > c.window_days:
                continue
            if status == "posted":
                self._set((schedule_id, occurs_on), "posted", int(tx["id"]), int(tx["seq"]))
            return


def _candidate(s: dict) -> schedule_meeting.Candidate:
    return schedule_meeting.Candidate(
        id=int(s["id"]),
        account_id=int(s["account_id"]),
        counter_account_id=int(s["counter_account_id"]),
        amount_cents=int(s["amount_cents"]),
        tolerance_cents=int(s["tolerance_cents"]),
        window_days=int(s["window_days"]),
        match_text=s["match_text"],
        rrule=s["rrule"],
        starts_on=date.fromisoformat(s["starts_on"]),
        weekend=s["weekend"],
    )


def check(trail: ScheduleTrail, disagreement: type[Exception]) -> int:
    """The stored schedules and occurrences against the trail; how many schedules."""
    if "schedules" not in inspect(db.session.connection()).get_table_names():
        return 0
    stored = {}
    for row in db.session.execute(select(Schedule).order_by(Schedule.id)).scalars():
        stored[int(row.id)] = schedules.stored_object(row)
        if row.name_key != accounts.name_key(row.name):
            raise disagreement(
                f"schedule {row.id}: its name key does not match its name: it was changed "
                "outside the service"
            )
    for schedule_id in sorted(set(stored) | set(trail.schedules)):
        seq = trail.schedule_seq.get(schedule_id)
        if schedule_id not in trail.schedules:
            gone = f" (deleted by event seq {seq})" if seq else ""
            raise disagreement(
                f"schedule {schedule_id} is in the ledger but no event created it{gone}: "
                "it was added outside the service"
            )
        if schedule_id not in stored:
            raise disagreement(
                f"schedule {schedule_id} (event seq {seq}) is missing from the ledger: it "
                "was removed outside the service"
            )
        recorded = trail.schedules[schedule_id]
        for part in SCHEDULE_KEYS:
            mine, theirs = stored[schedule_id][part], recorded[part]
            if mine != theirs:
                raise disagreement(
                    f"schedule {schedule_id}: {part} is {mine!r} in the ledger but {theirs!r} "
                    f"in event seq {seq}: it was changed outside the service"
                )
    _check_occurrences(trail, disagreement)
    return len(stored)


def _check_occurrences(trail: ScheduleTrail, disagreement: type[Exception]) -> None:
    """The stored occurrences against the trail's."""
    kept = {
        (int(r[0]), r[1].isoformat()): (r[2], None if r[3] is None else int(r[3]))
        for r in db.session.execute(
            select(
                ScheduleOccurrence.schedule_id,
                ScheduleOccurrence.occurs_on,
                ScheduleOccurrence.status,
                ScheduleOccurrence.transaction_id,
            )
        )
    }
    for key in sorted(set(kept) | set(trail.occurrences)):
        name = f"the occurrence of schedule {key[0]} on {key[1]}"
        if key not in trail.occurrences:
            raise disagreement(
                f"{name} is stored ({kept[key][0]}) but no event says so: it was added "
                "outside the service"
            )
        status, tx_id, seq = trail.occurrences[key]
        if key not in kept:
            raise disagreement(
                f"{name} ({status}, event seq {seq}) is missing from the ledger: it was "
                "removed outside the service"
            )
        if kept[key] != (status, tx_id):
            raise disagreement(
                f"{name} is {_said(*kept[key])} in the ledger but {_said(status, tx_id)} in "
                f"event seq {seq}: it was changed outside the service"
            )


def _said(status: str, tx_id: int | None) -> str:
    return status if tx_id is None else f"{status} by transaction {tx_id}"
