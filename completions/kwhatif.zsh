
#compdef kwhatif

_kwhatif_completion() {
  eval $(env _TYPER_COMPLETE_ARGS="${words[1,$CURRENT]}" _KWHATIF_COMPLETE=complete_zsh kwhatif)
}

compdef _kwhatif_completion kwhatif

