internal import TokenCache
/// One member of an MSAL serialized cache, as the streaming reader yields it.
///
/// For an entity section, one entry of that section: the key exactly as written (it is not trusted: the mapping
/// rebuilds identity from the fields, as MSAL .NET does) and the entry's parsed value. For an unknown top-level
/// section, the whole section value, with no key, so that it can be written back unchanged.
struct MSALCacheEntry: Equatable {
    /// The top-level member name exactly as written (e.g. `accesstoken`, `unknownEntity`).
    var sectionName: String
    /// What the section is: an entity kind, or unknown.
    var section: MSALSection
    /// The entry key as written; nil for an unknown section's value.
    var key: String?
    /// The entry value (or the unknown section's value), parsed with the strict response rules.
    var value: ResponseJSON
    /// Byte offset of the value in the input.
    var offset: Int
}
