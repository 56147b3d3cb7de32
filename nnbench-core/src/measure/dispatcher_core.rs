//! A core of its own for an open loop's dispatcher, at a priority above
//! other work where the process may set one.
//!
//! The dispatcher sleeps until a request is due and must then run at once.
//! Where the requests compute, the scheduler puts a request thread on the
//! dispatcher's core while it sleeps and wakes the dispatcher behind it:
//! the client issues requests late on an idle machine, where a server
//! that sleeps leaves it on time. So where the process may run on two
//! cores or more, the dispatcher takes the last of them for the loop, and
//! the requests run on the others (a core fewer for the service, which the
//! record says). Another process on that core (a busy machine) still
//! delays it, so the dispatcher also takes the lowest real-time priority
//! (`SCHED_FIFO` 1) where the process may (as root, or with
//! `CAP_SYS_NICE`), else the highest nice value it may: it sleeps but for
//! the last stretch before each request, and the kernel keeps a share of
//! every core for other work. With one core the dispatcher shares it with
//! the requests, at its own priority, and a client that falls behind says
//! so.

/// Where the dispatcher ran, and at what priority, as the record's
/// `load.dispatcher` names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Placement {
    /// A core of its own; the requests on the others.
    pub own_core: bool,
    pub priority: Priority,
}

/// The dispatcher's scheduling priority during the loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Priority {
    /// As the process left it.
    #[default]
    Unchanged,
    /// A higher nice value than the default.
    Raised,
    /// `SCHED_FIFO`: it runs as soon as it wakes.
    RealTime,
}

impl Placement {
    /// `own core, real-time`, `shared`, ...
    pub(crate) fn name(self) -> String {
        let core = if self.own_core { "own core" } else { "shared" };
        match self.priority {
            Priority::Unchanged => core.to_owned(),
            Priority::Raised => format!("{core}, raised priority"),
            Priority::RealTime => format!("{core}, real-time"),
        }
    }
}

pub(crate) use imp::Cores;

#[cfg(target_os = "linux")]
mod imp {
    use super::{Placement, Priority};

    /// The cores the loop's calling thread may run on, split between the
    /// dispatcher and the requests.
    #[derive(Clone, Copy)]
    pub(crate) struct Cores {
        all: libc::cpu_set_t,
        split: Option<(libc::cpu_set_t, libc::cpu_set_t)>,
        /// The calling thread's nice value and scheduling policy, which a
        /// request thread the dispatcher starts takes back (it would
        /// inherit the raise).
        nice: Option<libc::c_int>,
        policy: Option<(libc::c_int, libc::sched_param)>,
    }

    /// Puts back the calling thread's cores and priority when dropped.
    #[must_use]
    pub(crate) struct Placed {
        restore: Option<libc::cpu_set_t>,
        priority: Option<Raised>,
        own_core: bool,
    }

    /// A priority taken, with what to put back.
    #[derive(Clone, Copy)]
    enum Raised {
        RealTime {
            policy: libc::c_int,
            param: libc::sched_param,
        },
        Nice(libc::c_int),
    }

    impl Placed {
        /// Where the thread runs, and at what priority.
        pub(crate) fn placement(&self) -> Placement {
            Placement {
                own_core: self.own_core,
                priority: match self.priority {
                    None => Priority::Unchanged,
                    Some(Raised::Nice(_)) => Priority::Raised,
                    Some(Raised::RealTime { .. }) => Priority::RealTime,
                },
            }
        }
    }

    impl Drop for Placed {
        fn drop(&mut self) {
            match self.priority {
                // SAFETY: the calling thread's own policy, as it was.
                Some(Raised::RealTime { policy, param }) => unsafe {
                    libc::sched_setscheduler(0, policy, &param);
                },
                Some(Raised::Nice(nice)) => {
                    set_nice(nice);
                }
                None => {}
            }
            if let Some(all) = &self.restore {
                set(all);
            }
        }
    }

    /// The nice value tried where a real-time priority is refused.
    const DISPATCHER_NICE: libc::c_int = -10;

    fn set(cores: &libc::cpu_set_t) -> bool {
        // SAFETY: `cores` is a whole `cpu_set_t`, of the size given; 0 is
        // the calling thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), cores) == 0 }
    }

    fn this_thread() -> libc::id_t {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as libc::id_t }
    }

    fn set_nice(nice: libc::c_int) -> bool {
        // SAFETY: the calling thread's own id.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, this_thread(), nice) == 0 }
    }

    /// The calling thread's scheduling policy and its parameters.
    fn policy() -> Option<(libc::c_int, libc::sched_param)> {
        // SAFETY: the calling thread's own, read into a whole `sched_param`.
        unsafe {
            let policy = libc::sched_getscheduler(0);
            let mut param: libc::sched_param = std::mem::zeroed();
            (policy >= 0 && libc::sched_getparam(0, &mut param) == 0).then_some((policy, param))
        }
    }

    /// The calling thread's nice value.
    fn nice() -> Option<libc::c_int> {
        // SAFETY: errno is this thread's; -1 is a nice value as well as
        // the error return, which errno tells apart.
        unsafe {
            *libc::__errno_location() = 0;
            let nice = libc::getpriority(libc::PRIO_PROCESS, this_thread());
            (*libc::__errno_location() == 0).then_some(nice)
        }
    }

    /// Raises the calling thread's priority: real-time where allowed, else
    /// a higher nice value; what to put back, where either was allowed.
    fn raise(real_time: bool) -> Option<Raised> {
        if real_time {
            // SAFETY: the calling thread's own policy and parameters, read
            // into a whole `sched_param`.
            let taken = unsafe {
                let policy = libc::sched_getscheduler(0);
                let mut param: libc::sched_param = std::mem::zeroed();
                let read = policy >= 0 && libc::sched_getparam(0, &mut param) == 0;
                let fifo = libc::sched_param { sched_priority: 1 };
                (read
                    && policy == libc::SCHED_OTHER
                    && libc::sched_setscheduler(0, libc::SCHED_FIFO, &fifo) == 0)
                    .then_some(Raised::RealTime { policy, param })
            };
            if taken.is_some() {
                return taken;
            }
        }
        let before = nice()?;
        (before > DISPATCHER_NICE && set_nice(DISPATCHER_NICE)).then_some(Raised::Nice(before))
    }

    impl Cores {
        /// The calling thread's cores, split where there are two or more.
        pub(crate) fn of_this_thread() -> Self {
            // SAFETY: a zeroed `cpu_set_t` is an empty set, and the call
            // fills one of the size given for the calling thread.
            let mut all: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            let read = unsafe {
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut all)
            } == 0;
            let cores: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&cpu| read && unsafe { libc::CPU_ISSET(cpu, &all) })
                .collect();
            let split = match cores[..] {
                [.., _, last] => {
                    // SAFETY: a zeroed set is empty; `last` is below
                    // CPU_SETSIZE.
                    let mut own: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                    let mut rest = all;
                    unsafe {
                        libc::CPU_SET(last, &mut own);
                        libc::CPU_CLR(last, &mut rest);
                    }
                    Some((own, rest))
                }
                _ => None,
            };
            Self {
                all,
                split,
                nice: nice(),
                policy: policy(),
            }
        }

        /// Moves the calling thread, the dispatcher, to its core, at a
        /// higher priority where that is allowed, until the guard drops. A
        /// real-time priority only on a core of its own: spinning before
        /// a request, it would hold back the requests that share its core.
        pub(crate) fn dispatcher(&self) -> Placed {
            let mut placed = self.place(|(own, _)| own);
            placed.priority = raise(placed.own_core);
            placed
        }

        /// Moves the calling thread, one that runs requests, off the
        /// dispatcher's core until the guard drops, at the priority the
        /// loop's caller had: a thread the dispatcher starts inherits its
        /// raised nice value.
        pub(crate) fn requests(&self) -> Placed {
            // Off the dispatcher's core first, at the priority it started
            // with: at the caller's, it would wait there for the
            // dispatcher, which spins before each request, to sleep.
            let placed = self.place(|(_, rest)| rest);
            if let Some((caller, param)) = self.policy
                && policy().map(|(now, _)| now) != Some(caller)
            {
                // SAFETY: the calling thread's own policy, as the loop's
                // caller had it.
                unsafe { libc::sched_setscheduler(0, caller, &param) };
            }
            if let Some(nice) = self.nice.filter(|&n| Some(n) != nice()) {
                set_nice(nice);
            }
            placed
        }

        fn place(
            &self,
            pick: impl Fn(&(libc::cpu_set_t, libc::cpu_set_t)) -> &libc::cpu_set_t,
        ) -> Placed {
            let moved = self.split.as_ref().is_some_and(|split| set(pick(split)));
            Placed {
                restore: moved.then_some(self.all),
                priority: None,
                own_core: moved,
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Placement;

    /// Threads are not placed here: the dispatcher shares the cores.
    #[derive(Clone, Copy)]
    pub(crate) struct Cores;

    #[must_use]
    pub(crate) struct Placed;

    impl Placed {
        pub(crate) fn placement(&self) -> Placement {
            Placement::default()
        }
    }

    impl Cores {
        pub(crate) fn of_this_thread() -> Self {
            Self
        }

        pub(crate) fn dispatcher(&self) -> Placed {
            Placed
        }

        pub(crate) fn requests(&self) -> Placed {
            Placed
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn this_thread() -> (Vec<usize>, libc::c_int) {
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        assert_eq!(
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) },
            0
        );
        let cores = (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect();
        (cores, unsafe { libc::sched_getscheduler(0) })
    }

    #[test]
    fn the_dispatcher_and_the_requests_share_no_core_and_get_theirs_back() {
        let (before, policy) = this_thread();
        let cores = Cores::of_this_thread();
        let (dispatcher, placement, started) = {
            let placed = cores.dispatcher();
            // A request thread the dispatcher starts: off its core, at the
            // caller's priority.
            let started = std::thread::spawn(move || {
                let _placed = cores.requests();
                let nice =
                    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
                (this_thread(), nice)
            })
            .join()
            .expect("the thread");
            (this_thread(), placed.placement(), started)
        };
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        assert_eq!(started.0.1, policy, "a request thread is not real-time");
        assert_eq!(started.1, nice, "nor at the dispatcher's nice value");
        let requests = {
            let _placed = cores.requests();
            this_thread()
        };
        assert_eq!(this_thread(), (before.clone(), policy), "put back");
        if before.len() < 2 {
            assert!(!placement.own_core);
            assert_eq!(requests.0, before);
            return;
        }
        assert!(placement.own_core);
        assert_eq!(dispatcher.0, [before[before.len() - 1]]);
        assert_eq!(requests.0, before[..before.len() - 1]);
        assert_eq!(started.0.0, requests.0);
        let real_time = dispatcher.1 == libc::SCHED_FIFO;
        assert_eq!(real_time, placement.priority == Priority::RealTime);
    }
}
