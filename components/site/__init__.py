"""Above the layers: the site as a whole. The root config model (every layer's config, and the checks across
layers), the loader of `Pulumi.<stack>.yaml` and its inventory files, and where the site's parts are placed."""
