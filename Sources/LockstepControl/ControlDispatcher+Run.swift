import Foundation
import LockstepSchema
import LockstepSession
import Synchronization

/// What a run tells its dispatcher beside the player: where auditions play, how it was resumed,
/// its show link, and whether it takes commands at all.
extension ControlDispatcher {
    /// Where `audition` commands play: outputs apart from the show (nil: none, and an audition
    /// is answered `unsupported`).
    public var audition: CueAudition? {
        get { state.withLock { $0.audition } }
        set { state.withLock { $0.audition = newValue } }
    }

    /// How the run was resumed from its journal (`session run --resume`), for every `status`
    /// (nil: it was not).
    public var resumed: ControlStatus.Resumed? {
        get { resumedStatus.withLock { $0 } }
        set { resumedStatus.withLock { $0 = newValue } }
    }

    /// What `status` says of the run's show link (`session run --main` / `--backup-of`), asked at
    /// each status; nil: no link.
    public var link: (@Sendable () -> ControlStatus.Link?)? {
        get { linkSource.withLock { $0 } }
        set { linkSource.withLock { $0 = newValue } }
    }

    /// While set, every command but `status` is refused with this text (a backup following its
    /// main takes no command of its own: `session run --backup-of`); nil: commands are carried out.
    public var refusal: String? {
        get { refusalText.withLock { $0 } }
        set { refusalText.withLock { $0 = newValue } }
    }
}
