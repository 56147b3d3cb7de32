//! A core of its own for an open loop's dispatcher.
//!
//! The dispatcher sleeps until a request is due and must then run at once.
//! Where the requests compute, the scheduler puts a request thread on the
//! dispatcher's core while it sleeps, and wakes it there behind that thread:
//! a client issuing a tenth of its requests late at a fifth of a 1 ms
//! server's capacity on two cores, where a server that sleeps leaves it on
//! time. So where the process may run on two cores or more, the dispatcher
//! takes the last of them for the loop, and the requests run on the others
//! (a core fewer for the service, which the record says). With one core
//! the two share it, and a client that falls behind says so.

/// How the dispatcher got its core, as the record's `load.dispatcher`
/// names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Placement {
    /// A core of its own; the requests on the others.
    OwnCore,
    /// One core for both, or no way to place threads here.
    #[default]
    Shared,
}

impl Placement {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::OwnCore => "own core",
            Self::Shared => "shared",
        }
    }
}

pub(crate) use imp::Cores;

#[cfg(target_os = "linux")]
mod imp {
    use super::Placement;

    /// The cores the loop's calling thread may run on, split between the
    /// dispatcher and the requests.
    #[derive(Clone, Copy)]
    pub(crate) struct Cores {
        all: libc::cpu_set_t,
        split: Option<(libc::cpu_set_t, libc::cpu_set_t)>,
    }

    /// Puts back the calling thread's cores, and its nice value, when
    /// dropped.
    #[must_use]
    pub(crate) struct Placed {
        restore: Option<libc::cpu_set_t>,
        nice: Option<libc::c_int>,
    }

    impl Drop for Placed {
        fn drop(&mut self) {
            if let Some(all) = &self.restore {
                set(all);
            }
            if let Some(nice) = self.nice {
                set_nice(nice);
            }
        }
    }

    /// How much more of its core the dispatcher gets than a thread at the
    /// default, where the process may raise a thread's priority (as root,
    /// or with `CAP_SYS_NICE`): another process on its core then yields to
    /// it when a request is due.
    const DISPATCHER_NICE: libc::c_int = -10;

    fn this_thread() -> libc::id_t {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as libc::id_t }
    }

    fn set_nice(nice: libc::c_int) -> bool {
        // SAFETY: the calling thread's own id.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, this_thread(), nice) == 0 }
    }

    /// Raises the calling thread's priority; its nice value before, where
    /// the raise was allowed.
    fn raise() -> Option<libc::c_int> {
        // SAFETY: errno is this thread's; -1 is a nice value as well as
        // the error return, which errno tells apart.
        let before = unsafe {
            *libc::__errno_location() = 0;
            let nice = libc::getpriority(libc::PRIO_PROCESS, this_thread());
            (*libc::__errno_location() == 0).then_some(nice)
        }?;
        (before > DISPATCHER_NICE && set_nice(DISPATCHER_NICE)).then_some(before)
    }

    fn set(cores: &libc::cpu_set_t) -> bool {
        // SAFETY: `cores` is a whole `cpu_set_t`, of the size given; 0 is
        // the calling thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), cores) == 0 }
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
                [_, _, ..] => {
                    let last = cores[cores.len() - 1];
                    let mut own: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                    let mut rest = all;
                    // SAFETY: `last` is below CPU_SETSIZE.
                    unsafe {
                        libc::CPU_SET(last, &mut own);
                        libc::CPU_CLR(last, &mut rest);
                    }
                    Some((own, rest))
                }
                _ => None,
            };
            Self { all, split }
        }

        pub(crate) fn placement(&self) -> Placement {
            if self.split.is_some() {
                Placement::OwnCore
            } else {
                Placement::Shared
            }
        }

        /// Moves the calling thread, the dispatcher, to its core, at a
        /// higher priority where that is allowed, until the guard drops.
        pub(crate) fn dispatcher(&self) -> Placed {
            let mut placed = self.place(|(own, _)| own);
            placed.nice = raise();
            placed
        }

        /// Moves the calling thread, one that runs requests, off the
        /// dispatcher's core until the guard drops.
        pub(crate) fn requests(&self) -> Placed {
            self.place(|(_, rest)| rest)
        }

        fn place(
            &self,
            pick: impl Fn(&(libc::cpu_set_t, libc::cpu_set_t)) -> &libc::cpu_set_t,
        ) -> Placed {
            let moved = self.split.as_ref().is_some_and(|split| set(pick(split)));
            Placed {
                restore: moved.then_some(self.all),
                nice: None,
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

    impl Cores {
        pub(crate) fn of_this_thread() -> Self {
            Self
        }

        pub(crate) fn placement(&self) -> Placement {
            Placement::Shared
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

    fn this_thread() -> Vec<usize> {
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        assert_eq!(
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) },
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect()
    }

    #[test]
    fn the_dispatcher_and_the_requests_share_no_core_and_get_theirs_back() {
        let before = this_thread();
        let cores = Cores::of_this_thread();
        if before.len() < 2 {
            assert_eq!(cores.placement(), Placement::Shared);
            return;
        }
        assert_eq!(cores.placement(), Placement::OwnCore);
        let dispatcher = {
            let _placed = cores.dispatcher();
            this_thread()
        };
        let requests = {
            let _placed = cores.requests();
            this_thread()
        };
        assert_eq!(dispatcher, [before[before.len() - 1]]);
        assert_eq!(requests, before[..before.len() - 1]);
        assert_eq!(this_thread(), before, "the thread's cores are put back");
    }
}
