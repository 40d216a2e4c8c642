/// The events a comparison of two sides' outputs makes, on either side of a show link.
extension ShowLinkMain.Event {
    /// The event of `finding` about the other side at `peer`; `subject` starts its text
    /// (`link: the backup at HOST:PORT`, `backup:`).
    init(_ finding: OutputComparison.Finding, peer: String, subject: String) {
        switch finding {
        case .diverged(let start, let outputs):
            self.init(kind: .diverged, peer: peer,
                      text: "\(subject) differs from the main in the block at session sample \(start), outputs \(Self.list(outputs))",
                      position: start, outputs: outputs, exact: false)
        case .agrees(let start):
            self.init(kind: .agrees, peer: peer, text: "\(subject) plays the same as the main again from session sample \(start)", position: start)
        }
    }

    /// The event of a divergence found to the sample, about the other side at `peer`.
    init(_ divergence: OutputComparison.Divergence, peer: String, subject: String) {
        self.init(kind: .diverged, peer: peer,
                  text: "\(subject) diverges from the main at session sample \(divergence.position), outputs \(Self.list(divergence.outputs))",
                  position: divergence.position, outputs: divergence.outputs, exact: true)
    }

    private static func list(_ outputs: [Int]) -> String { outputs.map(String.init).joined(separator: ", ") }
}
