#if canImport(Glibc)
import Glibc
#endif

/// The wall clock (seconds since 1970) now: `clock_gettime(CLOCK_REALTIME)`, which the vDSO
/// answers without a system call. Realtime-safe.
@inline(__always)
func wallClockNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// A delay-locked loop (as JACK's own, after Fons Adriaensen's "Using a DLL to filter time") on
/// the times the process callbacks begin: it smooths their wake-up jitter into each cycle's start
/// on the wall clock and the device's real frame rate — from the frames played, not from the
/// server's idea of time, so it holds for a device on a clock of its own. Process thread only.
struct WallClockLoop {
    /// The loop's bandwidth (Hz).
    static let bandwidth = 1.0

    private var started = false
    private var current = 0.0
    private var next = 0.0
    private var period = 0.0
    private var frames = 0

    /// Takes the callback's time for a cycle of `frames` at the nominal `rate`; `continuous` is
    /// false when the cycle does not follow the last one (an xrun, a jump, a restart), which
    /// starts the loop again. Returns the cycle's start and the seconds per frame.
    @_noAllocation @_noLocks
    mutating func advance(measured: Double, frames: Int, rate: Int, continuous: Bool) -> (time: Double, secondsPerFrame: Double) {
        let nominal = Double(frames) / Double(max(1, rate))
        let error = measured - next
        if !started || !continuous || frames != self.frames || abs(error) > 4 * nominal {
            started = true
            self.frames = frames
            current = measured
            period = nominal
            next = measured + nominal
        } else {
            let omega = 2 * Double.pi * Self.bandwidth * nominal
            current = next
            next += 1.414_213_562_373_095 * omega * error + period
            period += omega * omega * error
        }
        return (current, period / Double(max(1, frames)))
    }
}
