import Foundation
import Testing

/// Holds up every ordinary (non-realtime) thread of the machine for a while, as a busy system
/// does, while realtime threads (JACK's, the engine's) run on: one busy loop per online core at
/// `SCHED_FIFO` priority 1, below every realtime audio thread and above every ordinary one.
/// Each loop ends itself when its time is up (the test thread that started it cannot run
/// meanwhile). Needs `chrt` and `taskset` (util-linux) and the right to realtime scheduling (root,
/// as for the `-R` servers the JACK tests start). The kernel's own ordinary threads are held up
/// too, so the server may xrun during a stall (seen: 0–8 xruns in a 250–400 ms stall): tests that stall run
/// again when it does.
public enum NonRealtimeStall {
    /// Why a stall cannot be made here, or nil when it can.
    public static var unavailable: String? {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["chrt", "-f", "1", "taskset", "-c", "0", "true"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        do { try probe.run() } catch { return "cannot run chrt: \(error)" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "chrt -f 1 taskset -c 0 true failed (status \(probe.terminationStatus)): no realtime scheduling here"
    }

    /// Stalls ordinary threads on every core for `milliseconds`, then returns.
    public static func stall(milliseconds: Int) throws {
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let script = "e=$(( ${EPOCHREALTIME/./} + \(milliseconds * 1000) )); while (( ${EPOCHREALTIME/./} < e )); do :; done"
        let loops = try (0..<cores).map { core -> Process in
            let loop = Process()
            loop.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            loop.arguments = ["chrt", "-f", "1", "taskset", "-c", String(core), "bash", "-c", script]
            try loop.run()
            return loop
        }
        for loop in loops { loop.waitUntilExit() }
    }
}

extension NonRealtimeStall {
    /// Runs `lockstep arguments` (which connect its output to `capture`), holds up ordinary
    /// threads for `milliseconds` a second after the capture first hears it, and returns the
    /// run's result once it has ended (the capture stopped).
    public static func run(_ arguments: [String], into capture: JACKCapture, stallingFor milliseconds: Int = 250) throws -> CLI.Result {
        let running = try CLI.spawn(arguments)
        #expect(capture.wait(timeout: 20) { capture.firstNonSilentRecordedFrame(channel: 0) != nil }, "lockstep was not heard")
        #expect(capture.waitForFrames(capture.frames + 48000, timeout: 5), "a second of it was not heard")
        try stall(milliseconds: milliseconds)
        let result = running.wait(timeout: 30)
        capture.stop()
        return result
    }
}

extension NonRealtimeStall {
    /// Runs a stall `scenario` through ``retryingOnXruns(_:attempts:_:)`` with three
    /// attempts (a stall holds up the kernel's ordinary threads too, so the server may xrun), or
    /// says why it is skipped where no stall can be made.
    public static func test(_ label: String, _ scenario: (XrunFlag) throws -> Void) throws {
        if let reason = unavailable {
            print("\(label): stall test skipped: \(reason)")
            return
        }
        try retryingOnXruns(label, scenario)
    }
}
