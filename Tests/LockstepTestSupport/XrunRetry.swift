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

/// Runs a live `scenario`; when the server xrun during it (a loaded machine: the test runner's
/// other tests share two cores with the server), the issues it recorded after it knew are known
/// ones and it runs again — up to `attempts` runs in all, the last one strict. Issues recorded
/// before it knew, and every issue of a run without an xrun, fail the test. An xrun loses frames
/// at JACK itself, before any client.
///
/// With `onlyAfterIssues` a run is repeated only when it recorded an issue after it knew (for a
/// long scenario that xruns by design, such as netjack2's outage: a clean run is the proof and is
/// not repeated).
public func retryingOnXruns(_ label: String, attempts: Int = 2, onlyAfterIssues: Bool = false,
                            _ scenario: (XrunFlag) throws -> Void) throws {
    for attempt in 1..<max(attempts, 1) {
        let flag = XrunFlag()
        let excused = Atomic<Int>(0)
        try withKnownIssue("the server xrun during the run (a loaded machine); it runs again", isIntermittent: true) {
            try scenario(flag)
        } matching: { _ in
            guard flag.isSet else { return false }
            excused.add(1, ordering: .relaxed)
            return true
        }
        guard flag.isSet && (!onlyAfterIssues || excused.load(ordering: .relaxed) > 0) else { return }
        print("\(label): the server xrun during run \(attempt) of at most \(attempts); once more")
    }
    try scenario(XrunFlag())
}
