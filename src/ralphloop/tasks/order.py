"""Which task comes next, and the dependency checks every source shares (pure). Light (Task only for its
type): `ralph status` checks prd.json's dependsOn through it."""

from __future__ import annotations

TYPE_CHECKING = False  # collections.abc imports collections: ~2 ms of `ralph status`, for annotations alone
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence

    from ralphloop.core.protocols import Task


def ready(task: Task, done: Collection[str]) -> bool:
    return not task.done and all(dep in done for dep in task.depends_on)


def pick_next(tasks: Sequence[Task], done: Collection[str] | None = None) -> Task | None:
    """The first task (in work order) that is not done and whose dependencies are all done.

    `done` is every done id when `tasks` is only part of the source (--resume-from); default: `tasks`'."""
    done = {task.id for task in tasks if task.done} if done is None else done
    for task in tasks:
        if ready(task, done):
            return task
    return None


def dependency_cycle(tasks: Iterable[Task]) -> list[str] | None:
    """One dependency cycle as a path of ids (first id repeated at the end), or None."""
    return cycle_in({task.id: list(task.depends_on) for task in tasks})


def cycle_in(graph: Mapping[str, Sequence[str]]) -> list[str] | None:
    """One cycle of `graph` (each id's dependencies; those it does not hold are left out) as a path of ids, the
    first repeated at the end; None when there is none."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for start in graph:
        if state.get(start):
            continue
        path: list[str] = []
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            node, index = stack.pop()
            if index == 0:
                state[node] = 1
                path.append(node)
            deps = [dep for dep in graph.get(node, []) if dep in graph]
            if index < len(deps):
                stack.append((node, index + 1))
                dep = deps[index]
                if state.get(dep) == 1:
                    return [*path[path.index(dep) :], dep]
                if not state.get(dep):
                    stack.append((dep, 0))
            else:
                state[node] = 2
                path.pop()
    return None


def unknown_dependencies(tasks: Sequence[Task]) -> list[tuple[Task, str]]:
    """(task, dependency) for every dependency that names no task."""
    known = {task.id for task in tasks}
    return [(task, dep) for task in tasks for dep in task.depends_on if dep not in known]


def waiting_on(task: Task, tasks: Sequence[Task]) -> list[str]:
    """The dependencies of `task` that are not done yet."""
    done = {item.id for item in tasks if item.done}
    return [dep for dep in task.depends_on if dep not in done]
