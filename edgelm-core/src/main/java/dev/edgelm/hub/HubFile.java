package dev.edgelm.hub;

/**
 * A file of a Hub repository as the API lists it.
 *
 * @param name   path in the repository ({@code rfilename})
 * @param size   bytes, or -1 when the listing did not say
 * @param sha256 hex SHA-256 of the content for files stored with LFS, else null
 * @param gitBlobId hex git blob id (SHA-1 of {@code "blob <size>\0" + content}) for other files, else null
 */
public record HubFile(String name, long size, String sha256, String gitBlobId) {}
