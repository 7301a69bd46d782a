/**
 * Work that one replica at a time may do (running a projection, running a job), named. Several
 * servers on one database each take a name before the work and hold it while they do it; a replica
 * that dies lets go of its names, so another takes the work over.
 */
export interface ReplicaLocks {
  /** True when this process holds `name` now (already held is true); false while another one does. */
  tryAcquire(name: string): Promise<boolean>;
  /** Whether this process still holds `name` (a lost connection loses every name). */
  holds(name: string): boolean;
  release(name: string): Promise<void>;
  close(): Promise<void>;
}

/** The only process on its database (embedded): every name is its own. */
export const soleReplica: ReplicaLocks = {
  tryAcquire: () => Promise.resolve(true),
  holds: () => true,
  release: () => Promise.resolve(),
  close: () => Promise.resolve(),
};
