import Testing

/// The parent of every suite, in every test target, that starts a `jackd` or opens JACK clients
/// in the test process. `.serialized` applies to all nested suites, so JACK tests never run in
/// parallel with each other — not even across test targets, which share one test process (each
/// starts its own realtime server; two at once on a 2-core machine disturb each other's timing,
/// and libjack's shared registry is process-wide). Add a suite with
/// `extension JACKTests { @Suite("…") struct MyTests { … } }`.
@Suite("JACK", .serialized, .enabled(if: JACKServer.isAvailable, "jackd is not installed"))
public struct JACKTests {
    /// Suites are created by the testing library.
    public init() {}
}
