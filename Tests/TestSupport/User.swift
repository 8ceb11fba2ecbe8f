/// The user and app most tests sign in: a personal Microsoft account (its home tenant is the consumers tenant), with
/// fabricated identifiers shaped as Microsoft Entra ID issues them.
public enum User {
    public static let uid = "00000000-0000-0000-66f3-3332eca7ea81"
    /// The well-known tenant id of personal Microsoft accounts.
    public static let utid = "9188040d-6c67-4c5b-b112-36a304b66dad"
    public static var home: String { "\(uid).\(utid)" }
    public static let username = "adele.vance@contoso.example"
    public static let name = "Adele Vance"
    /// The app that signs the user in.
    public static let client = "04f0c124-f2bc-4f59-8241-bf6df9866bbd"
    public static let cloud = "login.microsoftonline.com"
}
