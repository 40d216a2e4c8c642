import CJack

/// The status bits JACK reports when a client opens (`jack_status_t`), as an option set whose
/// unknown bits survive (in the manner of swift-system's `Errno`).
///
/// The corresponding C type is `jack_status_t`; the bits are `JackFailure`, `JackServerFailed`
/// and the others of `jack/types.h`.
public struct JACKStatus: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits, as JACK reports them.
    public let rawValue: UInt32

    /// A status with the bits `rawValue`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The status JACK reported through a `jack_status_t`.
    public init(_ status: jack_status_t) { self.init(rawValue: UInt32(status.rawValue)) }

    /// `JackFailure`: the operation failed.
    public static let failure = JACKStatus(JackFailure)
    /// `JackInvalidOption`: the operation had an invalid or unsupported option.
    public static let invalidOption = JACKStatus(JackInvalidOption)
    /// `JackNameNotUnique`: the client name was taken (and no unique name was allowed).
    public static let nameNotUnique = JACKStatus(JackNameNotUnique)
    /// `JackServerStarted`: the server was started by this open.
    public static let serverStarted = JACKStatus(JackServerStarted)
    /// `JackServerFailed`: no connection to the server.
    public static let serverFailed = JACKStatus(JackServerFailed)
    /// `JackServerError`: the server answered with an error.
    public static let serverError = JACKStatus(JackServerError)
    /// `JackNoSuchClient`: the client does not exist.
    public static let noSuchClient = JACKStatus(JackNoSuchClient)
    /// `JackLoadFailure`: an internal client could not be loaded.
    public static let loadFailure = JACKStatus(JackLoadFailure)
    /// `JackInitFailure`: an internal client could not be initialised.
    public static let initFailure = JACKStatus(JackInitFailure)
    /// `JackShmFailure`: JACK's shared memory could not be accessed.
    public static let sharedMemoryFailure = JACKStatus(JackShmFailure)
    /// `JackVersionError`: the client's protocol version does not match the server's.
    public static let versionError = JACKStatus(JackVersionError)
    /// `JackBackendError`: the server's backend failed.
    public static let backendError = JACKStatus(JackBackendError)
    /// `JackClientZombie`: the client was made a zombie by the server.
    public static let clientZombie = JACKStatus(JackClientZombie)

    private static let names: [(JACKStatus, String)] = [
        (.failure, "failure"), (.invalidOption, "invalidOption"), (.nameNotUnique, "nameNotUnique"),
        (.serverStarted, "serverStarted"), (.serverFailed, "serverFailed"), (.serverError, "serverError"),
        (.noSuchClient, "noSuchClient"), (.loadFailure, "loadFailure"), (.initFailure, "initFailure"),
        (.sharedMemoryFailure, "sharedMemoryFailure"), (.versionError, "versionError"),
        (.backendError, "backendError"), (.clientZombie, "clientZombie"),
    ]

    /// The names of the bits set, such as `[failure, serverFailed]`; unknown bits in hex.
    public var description: String {
        var rest = rawValue
        var parts: [String] = []
        for (bit, name) in Self.names where contains(bit) {
            parts.append(name)
            rest &= ~bit.rawValue
        }
        if rest != 0 { parts.append("0x" + String(rest, radix: 16)) }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
