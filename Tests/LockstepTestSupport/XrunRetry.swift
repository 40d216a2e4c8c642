import Synchronization
import Testing

/// Set by a live run once it knows whether the JACK server xrun while it played.
public final class XrunFlag: Sendable {
    private let value = Atomic<Bool>(false)
    /// Creates a flag that is not set.
    public init() {}
    /// Whether the run said the server xrun.
    public var isSet: Bool { value.load(ordering: .acquiring) }
    /// Records that the server xrun, when `xrun` is true (never clears).
    public func set(_ xrun: Bool) { if xrun { value.store(true, ordering: .releasing) } }
}

/// Runs a live `scenario`; when the JACK server xrun during it and the scenario recorded issues
/// after it said so, those issues are known ones and it runs again — up to `attempts` runs in
/// all, the last one strict. Issues recorded before the scenario set its flag, and every issue
/// of a run without an xrun, fail the test; a run that passed despite an xrun is the proof and
/// is not repeated.
///
/// The flag is for the server's xruns only, as an independent client (a capture, a source) or
/// the device's xrun callback saw them: an xrun loses frames at JACK itself, before any client.
/// Lockstep's own late starts, underruns and latencies are never excuses: check them before
/// setting the flag.
public func retryingOnXruns(_ label: String, attempts: Int = 3, _ scenario: (XrunFlag) throws -> Void) throws {
    for attempt in 1..<max(attempts, 1) {
        let flag = XrunFlag()
        let excused = Atomic<Int>(0)
        try withKnownIssue("the server xrun during the run; it runs again", isIntermittent: true) {
            try scenario(flag)
        } matching: { _ in
            guard flag.isSet else { return false }
            excused.add(1, ordering: .relaxed)
            return true
        }
        guard excused.load(ordering: .relaxed) > 0 else { return }
        print("\(label): the server xrun during run \(attempt) of at most \(attempts) and checks failed after it; once more")
    }
    try scenario(XrunFlag())
}
